<?php

declare(strict_types=1);

namespace RecuoTests;

/**
 * Describes a PHP API through reflection, so that the extension (`php --re recuo`) and the
 * IDE stub (php/recuo.stub.php, loaded in a PHP without the extension) can be compared item
 * by item: names, parameter names and order, types, defaults, return types, class shapes.
 */
final class ApiDescription
{
    /** @return array<string, mixed> */
    public static function ofExtension(string $extension): array
    {
        $ext = new \ReflectionExtension($extension);
        return self::describe(
            array_values($ext->getFunctions()),
            array_values($ext->getClasses()),
            $ext->getConstants(),
        );
    }

    /**
     * What the current process declared under `$namespace` in user code (the loaded stub).
     *
     * @return array<string, mixed>
     */
    public static function ofUserCode(string $namespace): array
    {
        $prefix = strtolower($namespace . '\\');
        $functions = [];
        foreach (get_defined_functions()['user'] as $name) {
            if (str_starts_with(strtolower($name), $prefix)) {
                $functions[] = new \ReflectionFunction($name);
            }
        }
        $classes = [];
        foreach (get_declared_classes() as $name) {
            $class = new \ReflectionClass($name);
            if ($class->isUserDefined() && str_starts_with(strtolower($name), $prefix)) {
                $classes[] = $class;
            }
        }
        $constants = [];
        foreach (get_defined_constants(true)['user'] ?? [] as $name => $value) {
            if (str_starts_with(strtolower($name), $prefix)) {
                $constants[$name] = $value;
            }
        }
        return self::describe($functions, $classes, $constants);
    }

    /**
     * @param list<\ReflectionFunction> $functions
     * @param list<\ReflectionClass<object>> $classes
     * @param array<string, mixed> $constants
     * @return array<string, mixed>
     */
    private static function describe(array $functions, array $classes, array $constants): array
    {
        $out = ['functions' => [], 'classes' => [], 'constants' => []];
        foreach ($functions as $function) {
            $out['functions'][$function->getName()] = self::callable($function);
        }
        foreach ($classes as $class) {
            $out['classes'][$class->getName()] = self::class_($class);
        }
        foreach ($constants as $name => $value) {
            $out['constants'][$name] = var_export($value, true);
        }
        ksort($out['functions']);
        ksort($out['classes']);
        ksort($out['constants']);
        return $out;
    }

    /** @return array<string, mixed> */
    private static function callable(\ReflectionFunctionAbstract $function): array
    {
        $params = [];
        foreach ($function->getParameters() as $p) {
            $params[] = [
                'name' => $p->getName(),
                'type' => $p->hasType() ? (string) $p->getType() : null,
                'optional' => $p->isOptional(),
                'nullable' => $p->allowsNull(),
                'default' => $p->isDefaultValueAvailable() ? var_export($p->getDefaultValue(), true) : null,
                'variadic' => $p->isVariadic(),
                'byReference' => $p->isPassedByReference(),
            ];
        }
        return [
            'parameters' => $params,
            'return' => $function->hasReturnType() ? (string) $function->getReturnType() : null,
        ];
    }

    /**
     * @param \ReflectionClass<object> $class
     * @return array<string, mixed>
     */
    private static function class_(\ReflectionClass $class): array
    {
        $own = static fn (\Reflector $member): bool => $member->getDeclaringClass()->getName() === $class->getName();
        $constants = [];
        foreach ($class->getReflectionConstants() as $constant) {
            if ($own($constant)) {
                $constants[$constant->getName()] = var_export($constant->getValue(), true);
            }
        }
        $properties = [];
        foreach ($class->getProperties() as $property) {
            if ($own($property) && !$property->isStatic()) {
                // Its name, type and modifiers: `public readonly ?int` (the stub's words).
                $properties[$property->getName()] = trim(implode(' ', \Reflection::getModifierNames($property->getModifiers()))
                    . ' ' . ($property->hasType() ? (string) $property->getType() : ''));
            }
        }
        $methods = [];
        foreach ($class->getMethods() as $method) {
            if ($own($method)) {
                // Its modifiers (`public static`, `private`: a class only recuo makes has a
                // private constructor), then its signature.
                $methods[$method->getName()] = [
                    'modifiers' => implode(' ', \Reflection::getModifierNames($method->getModifiers())),
                ] + self::callable($method);
            }
        }
        $interfaces = $class->getInterfaceNames();
        sort($interfaces);
        ksort($properties);
        ksort($constants);
        ksort($methods);
        $parent = $class->getParentClass();
        return [
            'final' => $class->isFinal(),
            'abstract' => $class->isAbstract(),
            'interface' => $class->isInterface(),
            'parent' => $parent === false ? null : $parent->getName(),
            'interfaces' => $interfaces,
            'constants' => $constants,
            'properties' => $properties,
            'methods' => $methods,
        ];
    }
}
