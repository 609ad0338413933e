//! `tests/vectors/policies.json`: a policy's plain form read and written by the core.

use recuo::{ConfigError, Policy, PolicyValue};
use serde_json::Value;

fn vectors() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/vectors/policies.json"
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

/// What the bindings do: their data as a [`PolicyValue`], then the core's checks.
fn read(value: &Value) -> Result<Policy, ConfigError> {
    let value: PolicyValue =
        serde_json::from_value(value.clone()).map_err(|_| ConfigError::InvalidValue)?;
    Policy::from_value(&value)
}

#[test]
fn valid_values_answer_their_plain_form() {
    for case in vectors()["valid"].as_array().unwrap() {
        let policy = read(&case["value"]).unwrap_or_else(|e| panic!("{}: {e}", case["name"]));
        let written = serde_json::to_value(policy.to_value()).unwrap();
        assert_eq!(written, case["expect"], "{}", case["name"]);
        let again = read(&written).unwrap();
        assert_eq!(again, policy, "{}: the plain form reads back", case["name"]);
    }
}

#[test]
fn invalid_values_are_refused_by_name() {
    for case in vectors()["invalid"].as_array().unwrap() {
        let error = read(&case["value"]).expect_err(case["name"].as_str().unwrap());
        assert_eq!(error.name(), case["error"], "{}", case["name"]);
    }
}

#[test]
fn a_list_is_not_a_policy() {
    for text in ["[3, 100]", "[]", "3", "null", "\"guide_a\""] {
        let value: Value = serde_json::from_str(text).unwrap();
        assert_eq!(read(&value), Err(ConfigError::InvalidValue), "{text}");
    }
}

#[test]
fn each_preset_answers_its_plain_form() {
    for case in vectors()["presets"].as_array().unwrap() {
        let policy = match case["name"].as_str().unwrap() {
            "guide_a" => Policy::guide_a(),
            "guide_b" => Policy::guide_b(),
            "adapters" => Policy::adapters(),
            "interactive" => Policy::interactive(),
            "batch" => Policy::batch(),
            other => panic!("no preset {other}"),
        };
        let written = serde_json::to_value(policy.to_value()).unwrap();
        assert_eq!(written, case["expect"], "{}", case["name"]);
    }
}
