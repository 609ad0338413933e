//! The value classes the core declares once: `Recuo\Report`, `Recuo\WhoAnswered` and
//! `Recuo\Plan`, declared from the table `make faces` writes ([`crate::faces::CLASSES`]).
//!
//! Each is a `final` class with a private constructor whose properties are real PHP
//! properties: public, `readonly`, typed as the table says. PHP itself then answers a write
//! (`Cannot modify readonly property Recuo\Report::$attempts`), a dynamic property, `clone`,
//! `==`, `var_dump`, `var_export`, `serialize` and Reflection, as for a readonly class of its
//! own. An object is made from the core's value through serde: the value's plain form, one
//! property per field, initialized from the class's scope ([`instance`]); an object PHP code
//! hands back is read the same way in reverse ([`Given::read`]).

use std::ffi::{c_char, c_int};
use std::marker::PhantomData;
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

use ext_php_rs::boxed::ZBox;
use ext_php_rs::builders::{ClassBuilder, FunctionBuilder};
use ext_php_rs::convert::{FromZvalMut, IntoZval};
use ext_php_rs::ffi::{
    zend_class_entry, zend_object, zend_property_info, zend_string, zend_type, zval, IS_UNDEF,
    ZEND_ACC_PUBLIC,
};
use ext_php_rs::flags::{ClassFlags, DataType, MethodFlags};
use ext_php_rs::prelude::*;
use ext_php_rs::types::{ZendHashTable, ZendObject, ZendStr, Zval};
use ext_php_rs::zend::{ClassEntry, ExecuteData, ExecutorGlobals};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Number, Value};

use crate::convert::type_name;
use crate::errors::{internal_error, php_error, value_error};
use crate::faces::CLASSES;
use crate::properties::{property_info, zend_type_of, ZEND_ACC_READONLY};

unsafe extern "C" {
    fn zend_declare_typed_property(
        ce: *mut zend_class_entry,
        name: *mut zend_string,
        property: *mut zval,
        access_type: c_int,
        doc_comment: *mut zend_string,
        type_: zend_type,
    ) -> *mut zend_property_info;
    fn zend_update_property(
        scope: *mut zend_class_entry,
        object: *mut zend_object,
        name: *const c_char,
        name_length: usize,
        value: *mut zval,
    );
}

/// A value class: its PHP name and its properties, in order.
#[derive(Debug)]
pub struct FaceClass {
    /// The class's name in full (`Recuo\Report`).
    pub name: &'static str,
    /// Its properties, in the order the core declares the fields.
    pub props: &'static [Prop],
}

/// One property of a value class: one field of the core's value.
#[derive(Debug)]
pub struct Prop {
    /// The PHP name (`elapsedMs`).
    pub name: &'static str,
    /// The field's name in the value's plain form (`elapsed_ms`).
    pub field: &'static str,
    /// The declared type, as the stub writes it (`?int`, `array`).
    pub ty: &'static str,
}

impl Prop {
    /// The property `name` showing `field`, of type `ty`.
    pub const fn new(name: &'static str, field: &'static str, ty: &'static str) -> Self {
        Prop { name, field, ty }
    }
}

/// A core value whose PHP face is one of [`CLASSES`].
pub trait Face: Serialize + DeserializeOwned {
    /// The class's name, as the table spells it.
    const CLASS: &'static str;
}

/// Each core value and the class of [`CLASSES`] that shows it.
macro_rules! faces {
    ($($value:ty => $class:literal),* $(,)?) => {
        $(impl Face for $value {
            const CLASS: &'static str = $class;
        })*
    };
}

faces! {
    recuo::Report => "Recuo\\Report",
    recuo::WhoAnswered => "Recuo\\WhoAnswered",
    recuo::Plan => "Recuo\\Plan",
    recuo::RetryAfterValue => "Recuo\\RetryAfter",
    recuo::BatchProgress => "Recuo\\BatchProgress",
}

/// The registered class entries, in the order of [`CLASSES`].
static ENTRIES: [AtomicPtr<ClassEntry>; CLASSES.len()] =
    [const { AtomicPtr::new(ptr::null_mut()) }; CLASSES.len()];

/// A class of the table and its registered entry (none before module startup).
fn class(name: &str) -> Option<(&'static FaceClass, &'static ClassEntry)> {
    let index = CLASSES.iter().position(|c| c.name == name)?;
    // SAFETY: null or a class entry registered at module startup, which lives as long as
    // the engine.
    let entry = unsafe { ENTRIES[index].load(Ordering::Acquire).as_ref() }?;
    Some((&CLASSES[index], entry))
}

/// Keeps the entry of a class of the table, just registered (see [`crate::errors::keep`]).
pub fn keep(entry: &'static mut ClassEntry) {
    if let Some(i) = CLASSES.iter().position(|c| Some(c.name) == entry.name()) {
        ENTRIES[i].store(entry, Ordering::Release);
    }
}

/// Registers every class of the table. Called from module startup.
///
/// # Errors
/// A class that cannot be registered, by name.
pub fn register() -> Result<(), String> {
    for (index, class) in CLASSES.iter().enumerate() {
        ClassBuilder::new(class.name)
            .flags(ClassFlags::Final | ClassFlags::NoDynamicProperties)
            .method(FunctionBuilder::constructor(refuse), MethodFlags::Private)
            .registration(crate::errors::keep)
            .register()
            .map_err(|e| format!("{}: {e}", class.name))?;
        let entry = ENTRIES[index].load(Ordering::Acquire);
        if entry.is_null() {
            return Err(format!("{}: not registered", class.name));
        }
        for prop in class.props {
            // SAFETY: module startup, a class entry just registered.
            unsafe { declare(entry, prop) };
        }
    }
    Ok(())
}

/// Declares `prop` on `entry`: public, readonly, typed, uninitialized.
///
/// # Safety
/// At module startup, on a live internal class entry.
unsafe fn declare(entry: *mut ClassEntry, prop: &Prop) {
    // A readonly property has no default: the slot starts uninitialized.
    let mut undef = Zval::new();
    undef.u1.type_info = IS_UNDEF;
    // An interned persistent name, as an internal class's properties have; never freed.
    let name = ZendStr::new_interned(prop.name, true).into_raw();
    let flags = ZEND_ACC_PUBLIC | ZEND_ACC_READONLY;
    // SAFETY: see the function's contract; the engine copies the (undefined) default.
    unsafe {
        zend_declare_typed_property(
            entry,
            name,
            &raw mut undef,
            flags as c_int,
            ptr::null_mut(),
            zend_type_of(prop.ty),
        );
    }
}

zend_fastcall! {
    /// The private constructor: PHP refuses `new` before reaching it, so only Reflection
    /// gets here, and the object is left as it was.
    extern "C" fn refuse(ex: &mut ExecuteData, _: &mut Zval) {
        let class = ex
            .get_self()
            .and_then(|object| object.get_class_name().ok())
            .unwrap_or_default();
        php_error(format!("Direct instantiation of {class} is not allowed")).throw();
    }
}

/// An object of `T`'s class, made from a `T`: what a function returns (its declared type is
/// the class).
#[derive(Debug)]
pub struct Instance<T>(pub Zval, PhantomData<T>);

impl<T: Face> IntoZval for Instance<T> {
    const TYPE: DataType = DataType::object(T::CLASS);
    const NULLABLE: bool = false;

    fn set_zval(self, zv: &mut Zval, _: bool) -> ext_php_rs::error::Result<()> {
        *zv = self.0;
        Ok(())
    }
}

/// Makes the object of `T`'s class that shows `value`: each property set from the field of
/// the value's plain form that the table names.
///
/// # Errors
/// A `Recuo\Exception\InternalError` when the value does not fit the table (a field missing
/// or of another type): a bug in recuo, never a panic.
pub fn instance<T: Face>(value: &T) -> PhpResult<Instance<T>> {
    let fail = |detail: String| internal_error(&format!("making a {}: {detail}", T::CLASS));
    let (class, entry) = class(T::CLASS).ok_or_else(|| fail("not registered".into()))?;
    let Value::Object(fields) = serde_json::to_value(value).map_err(|e| fail(e.to_string()))?
    else {
        return Err(fail("not an object".into()));
    };
    let mut object = ZendObject::new(entry);
    let raw: *mut zend_object = &raw mut *object;
    let scope = ptr::from_ref(entry).cast_mut();
    let pending = ExecutorGlobals::has_exception();
    for prop in class.props {
        let mut value = typed(prop, fields.get(prop.field)).map_err(&fail)?;
        // SAFETY: a live object of `entry` and a live value (which the property copies);
        // the class's own scope may initialize its readonly properties.
        unsafe {
            zend_update_property(
                scope,
                raw,
                prop.name.as_ptr().cast::<c_char>(),
                prop.name.len(),
                &raw mut value,
            );
        }
        if !pending && ExecutorGlobals::has_exception() {
            return Err(fail(format!("${} refused its value", prop.name)));
        }
    }
    let mut zv = Zval::new();
    object
        .set_zval(&mut zv, false)
        .map_err(|e| fail(e.to_string()))?;
    Ok(Instance(zv, PhantomData))
}

/// The value of `prop` from its field, as its declared type says.
fn typed(prop: &Prop, value: Option<&Value>) -> Result<Zval, String> {
    let value = value.ok_or_else(|| format!("no field `{}`", prop.field))?;
    let base = prop.ty.trim_start_matches('?');
    let fits = match (base, value) {
        (_, Value::Null) => prop.ty.starts_with('?'),
        ("int", Value::Number(n)) => n.is_i64() || n.is_u64(),
        ("float", Value::Number(_))
        | ("string", Value::String(_))
        | ("bool", Value::Bool(_))
        | ("array", Value::Array(_)) => true,
        _ => false,
    };
    if !fits {
        return Err(format!("`{}` is {value}, not {}", prop.field, prop.ty));
    }
    let mut zv = any(value)?;
    if let ("float", Value::Number(n)) = (base, value) {
        zv.set_double(n.as_f64().unwrap_or(f64::NAN));
    }
    Ok(zv)
}

/// A plain value as PHP's: lists as lists, objects as string-keyed arrays, integers beyond
/// PHP's as its largest.
fn any(value: &Value) -> Result<Zval, String> {
    let mut zv = Zval::new();
    match value {
        Value::Null => zv.set_null(),
        Value::Bool(b) => zv.set_bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => zv.set_long(i),
            (None, Some(u)) => return Err(format!("{u} does not fit in a PHP int")),
            _ => zv.set_double(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => zv.set_string(s, false).map_err(|e| e.to_string())?,
        Value::Array(items) => {
            let mut array = ZendHashTable::new();
            for item in items {
                array.push(any(item)?).map_err(|e| e.to_string())?;
            }
            zv.set_hashtable(array);
        }
        Value::Object(entries) => {
            let mut array = ZendHashTable::new();
            for (key, item) in entries {
                array
                    .insert(key.as_str(), any(item)?)
                    .map_err(|e| e.to_string())?;
            }
            zv.set_hashtable(array);
        }
    }
    Ok(zv)
}

/// An object of `T`'s class that PHP code hands in (the argument's declared type is the
/// class): [`Given::read`] reads it back as a `T`.
#[derive(Debug)]
pub struct Given<'a, T>(&'a ZendObject, PhantomData<T>);

impl<'a, T: Face> FromZvalMut<'a> for Given<'a, T> {
    const TYPE: DataType = DataType::object(T::CLASS);

    fn from_zval_mut(zval: &'a mut Zval) -> Option<Self> {
        let object = zval.object()?;
        let (_, entry) = class(T::CLASS)?;
        object
            .instance_of(entry)
            .then_some(Given(object, PhantomData))
    }
}

impl<T: Face> Given<'_, T> {
    /// The value the object shows: its properties as the fields of the value's plain form.
    ///
    /// # Errors
    /// What is wrong, when the object is not whole (one `unserialize()` made with a
    /// property missing, say) or a property does not read as the core's field.
    pub fn read(&self) -> Result<T, String> {
        let (class, entry) = class(T::CLASS).ok_or("not registered")?;
        let mut fields = Map::new();
        for prop in class.props {
            // SAFETY: a live object of the class, whose properties the class declares.
            let slot = unsafe { slot(self.0, entry, prop.name) }
                .ok_or_else(|| format!("${} is not initialized", prop.name))?;
            let value = plain(slot, Reading::Property, 0).map_err(|e| e.message())?;
            fields.insert(prop.field.to_owned(), value);
        }
        serde_json::from_value(Value::Object(fields)).map_err(|e| e.to_string())
    }
}

/// The initialized value of the property `name` of `object`.
///
/// # Safety
/// `object` is a live object of `entry`, a class of the table.
unsafe fn slot<'a>(object: &'a ZendObject, entry: &ClassEntry, name: &str) -> Option<&'a Zval> {
    // SAFETY: a live class entry (the function's contract).
    let info = unsafe { &*property_info(entry, name)? };
    // SAFETY: `offset` is the property's place in an object of the class.
    let value = unsafe {
        &*ptr::from_ref(object)
            .cast::<u8>()
            .add(info.offset as usize)
            .cast::<Zval>()
    };
    (value.get_type() != DataType::Undef).then_some(value)
}

/// `value`'s plain form as a PHP array, what `toValue()` answers: objects as string-keyed
/// arrays, lists as lists (for a declared `array` return type).
///
/// # Errors
/// A `Recuo\Exception\InternalError` when the value has no plain form, or one that is not an
/// object (a bug in recuo).
pub fn php_table<T: Serialize>(function: &str, value: &T) -> PhpResult<ZBox<ZendHashTable>> {
    let fail = |e: String| internal_error(&format!("{function}(): {e}"));
    let plain = serde_json::to_value(value).map_err(|e| fail(e.to_string()))?;
    any(&plain)
        .map_err(fail)?
        .array()
        .map(ToOwned::to_owned)
        .ok_or_else(|| fail("the plain form is not an object".to_owned()))
}

/// How deep plain data read from PHP may nest in arrays (a batch report's results hold
/// reports, which hold lists; a policy holds its maps, with room for serde to name a value of
/// the wrong type); deeper, or a cycle of references, is not plain data.
const MAX_DEPTH: usize = 8;

/// How [`plain`] reads PHP values as plain data, and words what it refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reading {
    /// A policy's plain form: every array an object (`[]` is `{}`), the place of a fault named
    /// (`at ["x"][418]`).
    Policy,
    /// A value's plain form: a list (keys 0, 1, …) as a list, any other array as an object.
    Value,
    /// One property of a value class: a scalar, or a list of scalars (the declared values'
    /// lists hold scalars only, and a PHP array may hold itself through a reference).
    Property,
}

/// Why a PHP value is not plain data, and where: the keys from the top (`["x"][418]`).
pub(crate) struct NotData {
    what: String,
    path: Vec<String>,
    /// Whether the message names the place (reading a policy).
    at: bool,
}

impl NotData {
    /// What is wrong, said as `how` says it: `policy` when reading a policy, `other` otherwise.
    fn new(how: Reading, policy: String, other: String) -> Self {
        let at = how == Reading::Policy;
        NotData {
            what: if at { policy } else { other },
            path: Vec::new(),
            at,
        }
    }

    /// What is wrong, and (reading a policy) where.
    pub(crate) fn message(&self) -> String {
        if !self.at {
            return self.what.clone();
        }
        let path: String = self.path.iter().rev().map(|k| format!("[{k}]")).collect();
        format!("{} at {path}", self.what)
    }
}

/// A PHP array, `depth` arrays down, as plain data (see [`Reading`]): integer keys as their
/// decimal text; keys and strings must be UTF-8; objects and resources are refused.
pub(crate) fn plain_table(
    table: &ZendHashTable,
    how: Reading,
    depth: usize,
) -> Result<Value, NotData> {
    if depth >= MAX_DEPTH {
        let policy = format!("arrays nested deeper than {MAX_DEPTH} levels");
        let other = "nested too deep to be a plain value".to_owned();
        return Err(NotData::new(how, policy, other));
    }
    if how != Reading::Policy && table.has_sequential_keys() {
        return table
            .values()
            .map(|item| plain(item, how, depth + 1))
            .collect::<Result<_, _>>()
            .map(Value::Array);
    }
    let mut map = Map::new();
    let mut entries = table.iter();
    while let Some((key, value)) = entries.next_zval() {
        let (key, label) = if let Some(text) = key.zend_str() {
            let label = format!("{:?}", String::from_utf8_lossy(text.as_bytes()));
            let Ok(key) = std::str::from_utf8(text.as_bytes()) else {
                let (policy, other) = ("a key that is not UTF-8", "a key that is not text");
                let mut error = NotData::new(how, policy.to_owned(), other.to_owned());
                error.path.push(label);
                return Err(error);
            };
            (key.to_owned(), label)
        } else {
            let key = key.long().unwrap_or_default().to_string();
            (key.clone(), key)
        };
        let value = plain(value, how, depth + 1).map_err(|mut error| {
            error.path.push(label);
            error
        })?;
        map.insert(key, value);
    }
    Ok(Value::Object(map))
}

/// One PHP value, `depth` arrays down, as plain data (see [`plain_table`]).
fn plain(zv: &Zval, how: Reading, depth: usize) -> Result<Value, NotData> {
    let zv = zv.dereference();
    let say = |policy: String, other: String| NotData::new(how, policy, other);
    let not = |policy: String| say(policy, format!("{} is not a plain value", type_name(zv)));
    if zv.is_null() {
        Ok(Value::Null)
    } else if let Some(b) = zv.bool() {
        Ok(Value::Bool(b))
    } else if let Some(i) = zv.long() {
        Ok(Value::from(i))
    } else if let Some(x) = zv.double() {
        Number::from_f64(x).map(Value::Number).ok_or_else(|| {
            say(
                format!("the float {x}"),
                format!("{x} is not a finite number"),
            )
        })
    } else if let Some(s) = zv.zend_str() {
        std::str::from_utf8(s.as_bytes())
            .map(|s| Value::String(s.to_owned()))
            .map_err(|_| not("a string that is not UTF-8".to_owned()))
    } else if let Some(table) = zv.array() {
        if how == Reading::Property && !table.has_sequential_keys() {
            return Err(not(String::new()));
        }
        if how == Reading::Property && depth > 0 {
            let inside = "a list inside a list is not a plain value here";
            return Err(say(String::new(), inside.to_owned()));
        }
        plain_table(table, how, depth)
    } else {
        Err(not(format!("a value of type {}", type_name(zv))))
    }
}

/// A PHP array, argument `position` (`$name`) of `function`, read as a `T`'s plain form: a
/// list (keys 0, 1, …) as a list, any other array as an object (integer keys as their decimal
/// text), scalars as they are.
///
/// # Errors
/// A `\ValueError`, `$name` `{what}: {why}`: why it is not plain data (an object, a resource,
/// a float that is not finite, nesting past eight levels), or not `T`'s plain form, in words.
pub fn read_data<T: DeserializeOwned>(
    function: &str,
    (position, name): (u32, &str),
    what: &str,
    table: &ZendHashTable,
) -> PhpResult<T> {
    plain_table(table, Reading::Value, 0)
        .map_err(|e| e.message())
        .and_then(|data| serde_json::from_value(data).map_err(|e| e.to_string()))
        .map_err(|why| value_error(function, position, name, &format!("{what}: {why}")))
}
