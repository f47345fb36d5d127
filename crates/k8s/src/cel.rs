//! The project's one CEL evaluator: Kubernetes' CEL environment on the `cel` crate, with a cost bound.
//!
//! Both the simulator (CRD `x-kubernetes-validations` rules) and the grader (CEL expectations in
//! lab files) evaluate through this module. Its API is small:
//!
//! 1. [`Expression::compile`] once, naming the variables the expression may use; a syntax error
//!    or an undeclared variable comes back as [`CompileErrors`], each with its 1-based line and
//!    column inside the expression (so a caller can add the expression's own file:line:col).
//! 2. [`Bindings`] binds those variables from `serde_json::Value`s: [`Bindings::json`] as
//!    Kubernetes treats untyped JSON (integral numbers are `int`, others `double`), or
//!    [`Bindings::typed`] as it treats a value under a structural schema (`type: number` is always
//!    `double`, properties escaped as `__dash__`/`__dot__`…).
//! 3. [`Expression::evaluate`] (any result, as JSON) or [`Expression::evaluate_bool`]. Before it
//!    runs, an expression's cost is estimated from its syntax tree and the sizes of the bound
//!    values; one over [`PER_CALL_COST_LIMIT`] is not run ([`Error::CostLimit`]), so no
//!    expression can run away.
//!
//! The environment is kube-apiserver 1.33's base environment
//! (`k8s.io/apiserver/pkg/cel/environment/base.go`) where the crate has it or this module adds
//! it: the CEL standard library with optional types, cel-go's strings extension, `sets.contains`
//! / `sets.equivalent` / `sets.intersects` (cel-go `ext/sets.go`), and Kubernetes' lists library
//! (`isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf`; `pkg/cel/library/lists.go`) and
//! regex library (`find`, `findAll`; `pkg/cel/library/regex.go`), and quantity library
//! (`quantity`, `isQuantity`, `sign`, `add`, `sub`, `compareTo`, `isLessThan`, `isGreaterThan`,
//! `asInteger`, `isInteger`, `asApproximateFloat`; `pkg/cel/library/quantity.go`). Not provided:
//! the URL, IP, CIDR, format, semver and image libraries, two-variable comprehensions, and cel-go's
//! type checker (a type mismatch is found when the expression runs, not when it is compiled).

use std::{
    collections::HashMap,
    fmt,
    sync::{Arc, LazyLock},
};

use cel::{
    Context, Env, ExecutionError, Program, Value,
    common::{
        ast::{ComprehensionExpr, EntryExpr, Expr, IdedExpr, LiteralValue},
        types::{DYN_TYPE, INT_TYPE, LIST_TYPE, STRING_TYPE, Type},
        value::{CowVal, Val},
    },
    objects::{Key, Map, Opaque},
};
use serde_json::Value as Json;

/// kube-apiserver's `PerCallLimit` (`k8s.io/apiserver/pkg/apis/cel/config.go`): the most one
/// evaluation of one expression may cost.
pub const PER_CALL_COST_LIMIT: u64 = 1_000_000;

/// Errors of compiling or evaluating an expression.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// The expression does not compile.
    #[error("{0}")]
    Compile(#[from] CompileErrors),
    /// The expression failed while it ran (no such key, no matching overload, division by zero).
    #[error("{0}")]
    Evaluation(String),
    /// The expression's estimated cost is over the limit; it was not run. Upstream's runtime
    /// words (`cel-go` `interpreter.CostTracker`).
    #[error("operation cancelled: actual cost limit exceeded")]
    CostLimit {
        /// The estimate for these bindings.
        estimated: u64,
        /// The limit it exceeds.
        limit: u64,
    },
    /// The expression returned a value of another type than the caller wanted.
    #[error("expected {wanted} result, got {found}")]
    ResultType {
        /// The wanted CEL type.
        wanted: &'static str,
        /// The CEL type returned.
        found: String,
    },
    /// The result has no JSON form (a type value, a function).
    #[error("the result {0} has no JSON form")]
    NotJson(String),
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// One compile error, at a 1-based line and column of the expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileError {
    /// 1-based line inside the expression.
    pub line: usize,
    /// 1-based column (in characters) inside that line.
    pub column: usize,
    /// What is wrong, in cel-go's words where the crate has them.
    pub message: String,
}

/// Every compile error of one expression, shown as cel-go shows them
/// (`ERROR: <input>:1:6: Syntax error: …` then the line and a caret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileErrors {
    /// The errors, in source order.
    pub errors: Vec<CompileError>,
    source: String,
}

impl std::error::Error for CompileErrors {}

impl fmt::Display for CompileErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, error) in self.errors.iter().enumerate() {
            if index > 0 {
                writeln!(f)?;
            }
            write!(f, "ERROR: <input>:{}:{}: {}", error.line, error.column, error.message)?;
            if let Some(line) = self.source.lines().nth(error.line.saturating_sub(1)) {
                write!(f, "\n | {line}\n | {}^", ".".repeat(error.column.saturating_sub(1)))?;
            }
        }
        Ok(())
    }
}

/// The shared environment: built once, read by every expression and evaluation.
static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| {
    let mut env = Env::stdlib();
    env.add_extension(cel::extensions::strings).expect("the strings extension declares once");
    env.add_extension(kubernetes_library).expect("the Kubernetes library declares once");
    // cel-go keeps the last of repeated map keys; kube-apiserver runs cel-go.
    env.set_error_on_duplicate_map_keys(false);
    Arc::new(env)
});

/// Namespaces of qualified function names (`sets.contains`), which parse as identifiers.
const NAMESPACES: &[&str] = &["sets", "strings", "optional", "math", "base64"];

/// Type names an expression may use as values (`type(x) == int`).
pub const TYPE_NAMES: &[&str] = &[
    "bool",
    "bytes",
    "double",
    "duration",
    "dyn",
    "int",
    "list",
    "map",
    "null_type",
    "string",
    "timestamp",
    "type",
    "uint",
];

/// A compiled expression, ready to be evaluated against [`Bindings`] any number of times.
#[derive(Debug)]
pub struct Expression {
    program: Program,
    source: String,
}

impl Expression {
    /// Compiles `source`, which may use the variables named in `variables` (and the
    /// comprehension variables it declares itself).
    ///
    /// ```
    /// use lab_runner_k8s::cel::{Bindings, Expression};
    /// let rule = Expression::compile("self.replicas <= 10", &["self"]).unwrap();
    /// let bindings = Bindings::new().json("self", &serde_json::json!({"replicas": 3}));
    /// assert!(rule.evaluate_bool(&bindings).unwrap());
    /// let error = Expression::compile("self.x +", &["self"]).unwrap_err();
    /// assert_eq!((error.errors[0].line, error.errors[0].column), (1, 9));
    /// ```
    pub fn compile(source: &str, variables: &[&str]) -> Result<Self, CompileErrors> {
        let program = ENV.compile(source).map_err(|errors| CompileErrors {
            errors: errors
                .errors
                .iter()
                .map(|e| CompileError {
                    line: usize::try_from(e.pos.0).unwrap_or(1).max(1),
                    column: usize::try_from(e.pos.1).unwrap_or(1).max(1),
                    message: e.msg.clone(),
                })
                .collect(),
            source: source.to_string(),
        })?;
        let mut undeclared = Vec::new();
        let mut scope: Vec<&str> = variables.to_vec();
        undeclared_references(program.expression(), &mut scope, &mut undeclared);
        if undeclared.is_empty() {
            return Ok(Self { program, source: source.to_string() });
        }
        let errors = undeclared
            .into_iter()
            .map(|(id, name)| {
                let offset = program.source_info().offset_for(id).map_or(0, |(start, _)| start as usize);
                let (line, column) = line_column(source, offset);
                CompileError {
                    line,
                    column,
                    message: format!("undeclared reference to '{name}' (in container '')"),
                }
            })
            .collect();
        Err(CompileErrors { errors, source: source.to_string() })
    }

    /// The expression's text.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// True when the expression refers to `variable` (e.g. `oldSelf`, to tell a transition rule).
    pub fn uses(&self, variable: &str) -> bool {
        self.program.references().has_variable(variable)
    }

    /// The estimated cost of evaluating the expression against `bindings` (see the module doc).
    pub fn estimated_cost(&self, bindings: &Bindings) -> u64 {
        let mut estimator = Estimator { bindings, scope: Vec::new() };
        estimator.estimate(self.program.expression()).cost
    }

    /// Evaluates against `bindings`; the result as JSON (`int`/`uint`/`double` as numbers,
    /// bytes as base64, timestamps as RFC 3339, durations as nanoseconds).
    pub fn evaluate(&self, bindings: &Bindings) -> Result<Json> {
        let value = self.run(bindings)?;
        value.json().map_err(|_| Error::NotJson(format!("{value:?}")))
    }

    /// Evaluates against `bindings`, which must give a `bool`.
    pub fn evaluate_bool(&self, bindings: &Bindings) -> Result<bool> {
        match self.run(bindings)? {
            Value::Bool(value) => Ok(value),
            other => Err(Error::ResultType { wanted: "bool", found: other.type_of().to_string() }),
        }
    }

    /// Evaluates against `bindings`, which must give a `string`.
    pub fn evaluate_string(&self, bindings: &Bindings) -> Result<String> {
        match self.run(bindings)? {
            Value::String(value) => Ok(value.to_string()),
            other => Err(Error::ResultType { wanted: "string", found: other.type_of().to_string() }),
        }
    }

    fn run(&self, bindings: &Bindings) -> Result<Value> {
        let estimated = self.estimated_cost(bindings);
        if estimated > PER_CALL_COST_LIMIT {
            return Err(Error::CostLimit { estimated, limit: PER_CALL_COST_LIMIT });
        }
        let mut context = Context::with_env(Arc::clone(&ENV));
        for (name, value) in &bindings.values {
            context.add_variable_from_value(name.clone(), value.clone());
        }
        for (name, StringPredicate(function)) in &bindings.functions {
            let function = Arc::clone(function);
            context
                .add_function(name, move |a: Arc<String>, b: Arc<String>| function(&a, &b))
                .map_err(|e| Error::Evaluation(e.to_string()))?;
        }
        self.program.execute(&context).map_err(|e| Error::Evaluation(execution_message(&e)))
    }
}

/// cel-go's words for the runtime errors a rule's author meets most.
fn execution_message(error: &ExecutionError) -> String {
    match error {
        ExecutionError::NoSuchKey(key) => format!("no such key: {key}"),
        ExecutionError::DivisionByZero(_) => "division by zero".to_string(),
        ExecutionError::RemainderByZero(_) => "modulus by zero".to_string(),
        ExecutionError::Overflow(..) => "integer overflow".to_string(),
        ExecutionError::UndeclaredReference(name) => format!("no such attribute: {name}"),
        other => other.to_string(),
    }
}

/// 1-based line and column of the character at `offset` in `source`.
fn line_column(source: &str, offset: usize) -> (usize, usize) {
    let (mut line, mut column) = (1, 1);
    for c in source.chars().take(offset) {
        if c == '\n' {
            line += 1;
            column = 1;
        } else {
            column += 1;
        }
    }
    (line, column)
}

/// Collects identifiers that are neither in `scope` nor a type or namespace name.
fn undeclared_references<'e>(expr: &'e IdedExpr, scope: &mut Vec<&'e str>, found: &mut Vec<(u64, String)>) {
    match &expr.expr {
        Expr::Ident(name) => {
            if !scope.contains(&name.as_str()) && !TYPE_NAMES.contains(&name.as_str()) {
                found.push((expr.id, name.clone()));
            }
        }
        Expr::Call(call) => {
            match call.target.as_deref() {
                Some(IdedExpr { expr: Expr::Ident(name), .. }) if NAMESPACES.contains(&name.as_str()) => {}
                Some(target) => undeclared_references(target, scope, found),
                None => {}
            }
            for arg in &call.args {
                undeclared_references(arg, scope, found);
            }
        }
        Expr::Select(select) => undeclared_references(&select.operand, scope, found),
        Expr::List(list) => list.elements.iter().for_each(|e| undeclared_references(e, scope, found)),
        Expr::Map(map) => entries(&map.entries).for_each(|e| undeclared_references(e, scope, found)),
        Expr::Struct(object) => entries(&object.entries).for_each(|e| undeclared_references(e, scope, found)),
        Expr::Comprehension(c) => {
            undeclared_references(&c.iter_range, scope, found);
            undeclared_references(&c.accu_init, scope, found);
            let depth = scope.len();
            scope.extend([c.iter_var.as_str(), c.accu_var.as_str()]);
            scope.extend(c.iter_var2.as_deref());
            for part in [&c.loop_cond, &c.loop_step, &c.result] {
                undeclared_references(part, scope, found);
            }
            scope.truncate(depth);
        }
        Expr::Literal(_) | Expr::Unspecified => {}
    }
}

/// The expressions of map or struct literal entries (keys and values).
fn entries(list: &[cel::common::ast::IdedEntryExpr]) -> impl Iterator<Item = &IdedExpr> {
    list.iter().flat_map(|entry| match &entry.expr {
        EntryExpr::StructField(field) => vec![&field.value],
        EntryExpr::MapEntry(pair) => vec![&pair.key, &pair.value],
    })
}

/// Variables bound for evaluation, each converted once from JSON.
#[derive(Debug, Clone, Default)]
pub struct Bindings {
    values: Vec<(String, Value)>,
    functions: Vec<(String, StringPredicate)>,
}

/// A function of two strings to a bool, bound for one evaluation (a lab's `fact(name, value)`
/// compares with a hashed fact the expression never sees).
#[derive(Clone)]
pub struct StringPredicate(pub Arc<Predicate>);

/// The function a [`StringPredicate`] holds.
pub type Predicate = dyn Fn(&str, &str) -> bool + Send + Sync;

impl fmt::Debug for StringPredicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StringPredicate")
    }
}

impl Bindings {
    /// No variables yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Binds `name` to untyped JSON as Kubernetes decodes it: a number without a fraction or
    /// exponent that fits an int64 is an `int`, any other number a `double`.
    pub fn json(mut self, name: &str, value: &Json) -> Self {
        self.values.push((name.to_string(), from_json(value)));
        self
    }

    /// Binds `name` to `value` typed by its structural `schema` as kube-apiserver does for CRD
    /// rules (`k8s.io/apiserver/pkg/cel/common/values.go` `UnstructuredToVal`): `type: number` is
    /// a `double` even when written `3`, `integer` an `int`, `format: byte` strings are `bytes`,
    /// declared properties are escaped (`foo-bar` is `foo__dash__bar`; a property no CEL name
    /// can spell is left out), and values under `x-kubernetes-preserve-unknown-fields` or
    /// without a schema are untyped JSON.
    pub fn typed(mut self, name: &str, value: &Json, schema: &Json) -> Self {
        self.values.push((name.to_string(), from_typed_json(value, schema)));
        self
    }

    /// Binds the function `name(string, string) -> bool` for this evaluation; a name the
    /// environment already declares is refused when the expression runs.
    pub fn predicate(mut self, name: &str, function: StringPredicate) -> Self {
        self.functions.push((name.to_string(), function));
        self
    }

    /// Binds `name` to an optional value (`optional.of(value)` or `optional.none()`), typed by
    /// `schema` as [`Bindings::typed`] types it: `oldSelf` of a rule with `optionalOldSelf`.
    pub fn optional_typed(mut self, name: &str, value: Option<&Json>, schema: &Json) -> Self {
        let optional = match value {
            Some(value) => cel::objects::OptionalValue::of(from_typed_json(value, schema)),
            None => cel::objects::OptionalValue::none(),
        };
        self.values.push((name.to_string(), Value::Opaque(Arc::new(optional))));
        self
    }

    fn get(&self, name: &str) -> Option<&Value> {
        self.values.iter().rev().find(|(bound, _)| bound == name).map(|(_, value)| value)
    }
}

fn from_json(value: &Json) -> Value {
    match value {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => Value::String(Arc::new(s.clone())),
        Json::Array(items) => Value::List(Arc::new(items.iter().map(from_json).collect())),
        Json::Object(fields) => {
            let map: HashMap<Key, Value> =
                fields.iter().map(|(k, v)| (Key::String(Arc::new(k.clone())), from_json(v))).collect();
            Value::Map(Map { map: Arc::new(map) })
        }
    }
}

fn from_typed_json(value: &Json, schema: &Json) -> Value {
    if !schema.is_object()
        || schema["x-kubernetes-preserve-unknown-fields"] == true && schema["properties"].is_null()
    {
        return from_json(value);
    }
    match (value, schema["type"].as_str()) {
        (Json::Number(n), Some("number")) => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        (Json::String(s), Some("string")) if schema["format"] == "byte" => {
            use base64::Engine as _;
            match base64::engine::general_purpose::STANDARD.decode(s) {
                Ok(bytes) => Value::Bytes(Arc::new(bytes)),
                Err(_) => Value::String(Arc::new(s.clone())),
            }
        }
        (Json::Array(items), _) => {
            Value::List(Arc::new(items.iter().map(|item| from_typed_json(item, &schema["items"])).collect()))
        }
        (Json::Object(fields), _) if schema["properties"].is_object() => {
            let properties = &schema["properties"];
            let map: HashMap<Key, Value> = fields
                .iter()
                .filter_map(|(key, field)| {
                    let escaped = escape_property(key)?;
                    let typed = match properties.get(key) {
                        Some(property) => from_typed_json(field, property),
                        None => from_json(field),
                    };
                    Some((Key::String(Arc::new(escaped)), typed))
                })
                .collect();
            Value::Map(Map { map: Arc::new(map) })
        }
        (Json::Object(fields), _) if schema["additionalProperties"].is_object() => {
            let items = &schema["additionalProperties"];
            let map: HashMap<Key, Value> = fields
                .iter()
                .map(|(key, field)| (Key::String(Arc::new(key.clone())), from_typed_json(field, items)))
                .collect();
            Value::Map(Map { map: Arc::new(map) })
        }
        _ => from_json(value),
    }
}

/// CEL's reserved words, which a property name escapes as `__{word}__` and no variable can be.
pub const RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// A property name as CEL spells it (`k8s.io/apiserver/pkg/cel/escaping.go` `Escape`): `__` →
/// `__underscores__`, `.` → `__dot__`, `-` → `__dash__`, `/` → `__slash__`, a reserved word
/// `w` → `__w__`; `None` for a name outside `[a-zA-Z_.-/][a-zA-Z0-9_.-/]*`.
pub fn escape_property(name: &str) -> Option<String> {
    if RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let mut chars = name.chars();
    let first = chars.next()?;
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/');
    if !(first.is_ascii_alphabetic() || matches!(first, '_' | '.' | '-' | '/')) || !chars.all(allowed) {
        return None;
    }
    let mut escaped = String::with_capacity(name.len());
    let mut rest = name;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("__") {
            escaped.push_str("__underscores__");
            rest = after;
            continue;
        }
        let c = rest.chars().next().unwrap_or_default();
        match c {
            '.' => escaped.push_str("__dot__"),
            '-' => escaped.push_str("__dash__"),
            '/' => escaped.push_str("__slash__"),
            other => escaped.push(other),
        }
        rest = &rest[c.len_utf8()..];
    }
    Some(escaped)
}

/// What the estimator knows of a value: the value itself (a bound variable or a path into
/// one), only a bound on its size, or, for a list an expression builds (`map`, `filter`, a list
/// literal), bounds on its length and on each element's size apart, so a `filter` followed by a
/// `map` iterates over as many elements as the first kept, not over their total size.
#[derive(Clone, Copy)]
enum Shape<'a> {
    Known(&'a Value),
    Bounded(u64),
    Items { count: u64, element: u64 },
}

impl Shape<'_> {
    /// The largest length (elements, entries, characters, bytes) found anywhere in the value.
    fn size(self) -> u64 {
        match self {
            Shape::Known(value) => deep_size(value),
            Shape::Bounded(size) => size,
            Shape::Items { count, element } => count.max(element),
        }
    }

    /// A list's length and element size bounds, when the shape is known to be a list.
    fn items(self) -> Option<(u64, u64)> {
        match self {
            Shape::Items { count, element } => Some((count, element)),
            Shape::Known(Value::List(items)) => {
                Some((items.len() as u64, items.iter().map(deep_size).max().unwrap_or(0)))
            }
            _ => None,
        }
    }
}

fn deep_size(value: &Value) -> u64 {
    match value {
        Value::List(items) => items.iter().map(deep_size).fold(items.len() as u64, u64::max),
        Value::Map(map) => map.map.values().map(deep_size).fold(map.map.len() as u64, u64::max),
        Value::String(s) => s.len() as u64,
        Value::Bytes(b) => b.len() as u64,
        // A scalar is not walked: comparing two ints costs the call, nothing per element.
        _ => 0,
    }
}

/// The bound on the elements of `range` a comprehension iterates over, and how many there are.
fn elements(range: Shape<'_>) -> (u64, Shape<'_>) {
    match range {
        Shape::Known(Value::List(items)) => {
            (items.len() as u64, Shape::Bounded(items.iter().map(deep_size).max().unwrap_or(0)))
        }
        Shape::Known(Value::Map(map)) => {
            let keys = map.map.keys().map(|k| match k {
                Key::String(s) => s.len() as u64,
                _ => 1,
            });
            (map.map.len() as u64, Shape::Bounded(keys.max().unwrap_or(0)))
        }
        Shape::Items { count, element } => (count, Shape::Bounded(element)),
        other => (other.size(), Shape::Bounded(other.size())),
    }
}

/// Up to this many elements, a comprehension over a bound list is estimated element by element
/// (exact for the data at hand); beyond, from bounds (a nested pair of comprehensions over
/// thousands of elements is then estimated at once, not walked).
const EXACT_UP_TO: usize = 256;

/// One node's estimate: what evaluating it costs and what it yields.
struct Estimate<'a> {
    cost: u64,
    shape: Shape<'a>,
}

/// Estimates an upper bound of an expression's cost, in the spirit of cel-go's cost model
/// (one unit per operation, a unit per element or character a function walks), from the sizes
/// of the values actually bound.
struct Estimator<'a> {
    bindings: &'a Bindings,
    scope: Vec<(&'a str, Shape<'a>)>,
}

impl<'a> Estimator<'a> {
    fn estimate(&mut self, expr: &'a IdedExpr) -> Estimate<'a> {
        match &expr.expr {
            Expr::Literal(literal) => {
                let size = match literal {
                    LiteralValue::String(s) => s.inner().len() as u64,
                    LiteralValue::Bytes(b) => b.inner().len() as u64,
                    _ => 0,
                };
                Estimate { cost: 1, shape: Shape::Bounded(size) }
            }
            Expr::Ident(name) => {
                let shape = match self.scope.iter().rev().find(|(bound, _)| bound == name) {
                    Some((_, shape)) => *shape,
                    None => self.bindings.get(name).map_or(Shape::Bounded(0), Shape::Known),
                };
                Estimate { cost: 1, shape }
            }
            Expr::Select(select) => {
                let operand = self.estimate(&select.operand);
                let shape = match operand.shape {
                    Shape::Known(Value::Map(map)) => {
                        let key = Key::String(Arc::new(select.field.clone()));
                        map.map.get(&key).map_or(Shape::Bounded(0), Shape::Known)
                    }
                    Shape::Known(_) => Shape::Bounded(0),
                    Shape::Items { count, element } => Shape::Bounded(count.max(element)),
                    bounded => bounded,
                };
                Estimate { cost: operand.cost.saturating_add(1), shape }
            }
            Expr::List(list) => {
                let (mut cost, mut element) = (1u64, 0u64);
                for item in &list.elements {
                    let estimate = self.estimate(item);
                    cost = cost.saturating_add(estimate.cost);
                    element = element.max(estimate.shape.size());
                }
                Estimate { cost, shape: Shape::Items { count: list.elements.len() as u64, element } }
            }
            Expr::Map(map) => self.aggregate(entries(&map.entries)),
            Expr::Struct(object) => self.aggregate(entries(&object.entries)),
            Expr::Call(call) => {
                let parts: Vec<Estimate<'a>> = call
                    .target
                    .as_deref()
                    .into_iter()
                    .chain(call.args.iter())
                    .map(|e| self.estimate(e))
                    .collect();
                call_estimate(&call.func_name, &parts)
            }
            Expr::Comprehension(c) => self.comprehension(c),
            Expr::Unspecified => Estimate { cost: 1, shape: Shape::Bounded(1) },
        }
    }

    /// A comprehension over a bound list, element by element: each step is estimated with its
    /// element as it is (a pod's one container, not as many as the largest list in any pod), and
    /// the accumulator as the steps before left it.
    fn comprehension_over(
        &mut self,
        c: &'a ComprehensionExpr,
        items: &'a [Value],
        setup: u64,
        init: Shape<'a>,
    ) -> Estimate<'a> {
        let depth = self.scope.len();
        let mut accumulator = match init.items() {
            Some((count, element)) => Shape::Items { count, element },
            None => Shape::Bounded(init.size()),
        };
        let mut cost = setup;
        for item in items {
            self.scope.truncate(depth);
            self.scope.push((c.iter_var.as_str(), Shape::Known(item)));
            if let Some(second) = &c.iter_var2 {
                self.scope.push((second.as_str(), Shape::Known(item)));
            }
            self.scope.push((c.accu_var.as_str(), accumulator));
            cost = cost.saturating_add(self.estimate(&c.loop_cond).cost);
            let step = self.estimate(&c.loop_step);
            cost = cost.saturating_add(step.cost);
            accumulator = match step.shape.items() {
                Some((count, element)) => Shape::Items { count, element },
                None => Shape::Bounded(step.shape.size()),
            };
        }
        self.scope.truncate(depth);
        self.scope.push((c.accu_var.as_str(), accumulator));
        let result = self.estimate(&c.result);
        self.scope.truncate(depth);
        let shape = match result.shape {
            Shape::Items { count, element } => Shape::Items { count, element },
            other => Shape::Bounded(other.size()),
        };
        Estimate { cost: cost.saturating_add(result.cost), shape }
    }

    fn aggregate(&mut self, items: impl Iterator<Item = &'a IdedExpr>) -> Estimate<'a> {
        let (mut cost, mut size, mut count) = (1u64, 0u64, 0u64);
        for item in items {
            let estimate = self.estimate(item);
            cost = cost.saturating_add(estimate.cost);
            size = size.max(estimate.shape.size());
            count += 1;
        }
        Estimate { cost, shape: Shape::Bounded(size.max(count)) }
    }

    fn comprehension(&mut self, c: &'a ComprehensionExpr) -> Estimate<'a> {
        let range = self.estimate(&c.iter_range);
        let init = self.estimate(&c.accu_init);
        if let Shape::Known(Value::List(items)) = range.shape
            && items.len() <= EXACT_UP_TO
        {
            return self.comprehension_over(c, items, range.cost.saturating_add(init.cost), init.shape);
        }
        let (count, element) = elements(range.shape);
        let depth = self.scope.len();
        self.scope.push((c.iter_var.as_str(), element));
        if let Some(second) = &c.iter_var2 {
            self.scope.push((second.as_str(), element));
        }
        let init_size = init.shape.size();
        let init_shape = match init.shape.items() {
            Some((count, element)) => Shape::Items { count, element },
            None => Shape::Bounded(init_size),
        };
        self.scope.push((c.accu_var.as_str(), init_shape));
        let first_step = self.estimate(&c.loop_step).shape;
        // An accumulator that grows (map, filter) grows by at most the first step's growth per
        // element; the body is then estimated with the accumulator at its largest. A list grows
        // by elements, each no larger than the first step's.
        let grown = match (init.shape.items(), first_step.items()) {
            (Some((start, _)), Some((after, element))) => Shape::Items {
                count: start.saturating_add(count.saturating_mul(after.saturating_sub(start))),
                element,
            },
            _ => Shape::Bounded(
                init_size.saturating_add(count.saturating_mul(first_step.size().saturating_sub(init_size))),
            ),
        };
        if let Some(accumulator) = self.scope.last_mut() {
            accumulator.1 = grown;
        }
        let per_element = self.estimate(&c.loop_cond).cost.saturating_add(self.estimate(&c.loop_step).cost);
        let result = self.estimate(&c.result);
        self.scope.truncate(depth);
        let cost = range
            .cost
            .saturating_add(init.cost)
            .saturating_add(count.saturating_mul(per_element))
            .saturating_add(result.cost);
        let shape = match result.shape {
            Shape::Items { count, element } => Shape::Items { count, element },
            other => Shape::Bounded(other.size()),
        };
        Estimate { cost, shape }
    }
}

/// A call's cost: its arguments', one unit, and one unit per element or character of its
/// arguments (what a function that walks them costs); set functions and `replace`/`join` walk
/// one argument per element of the other.
fn call_estimate<'a>(function: &str, parts: &[Estimate<'a>]) -> Estimate<'a> {
    let sizes: Vec<u64> = parts.iter().map(|p| p.shape.size()).collect();
    let arguments = parts.iter().fold(1u64, |cost, p| cost.saturating_add(p.cost));
    let sum = sizes.iter().fold(0u64, |a, b| a.saturating_add(*b));
    let product = sizes.iter().fold(1u64, |a, b| a.saturating_mul((*b).max(1)));
    let largest = sizes.iter().copied().max().unwrap_or(1);
    let (walk, size) = match function {
        "_+_" => (sum, sum),
        "sets.contains" | "sets.equivalent" | "sets.intersects" => (product, 1),
        "replace" | "join" | "format" => (product, product),
        "split" | "findAll" => (sum, largest),
        // Logic and the comprehension's loop test yield a bool and walk nothing.
        "_&&_" | "_||_" | "!_" | "@not_strictly_false" => (0, 1),
        "_?_:_" | "_[_]" | "_[?_]" => (0, largest),
        // Comparisons and tests walk their arguments and yield a bool or a number.
        "_==_" | "_!=_" | "_<_" | "_<=_" | "_>_" | "_>=_" | "@in" | "contains" | "startsWith"
        | "endsWith" | "matches" | "size" | "indexOf" | "lastIndexOf" | "isSorted" => (sum, 1),
        _ => (sum, largest),
    };
    let lists: Option<Vec<(u64, u64)>> = parts.iter().map(|p| p.shape.items()).collect();
    let shape = match (function, lists, parts) {
        // Concatenated lists: their lengths add up, their elements stay as large as they were.
        ("_+_", Some(lists), _) => Shape::Items {
            count: lists.iter().fold(0u64, |a, (count, _)| a.saturating_add(*count)),
            element: lists.iter().map(|(_, element)| *element).max().unwrap_or(0),
        },
        // Either branch of a condition.
        ("_?_:_", _, [_, yes, no]) => match (yes.shape.items(), no.shape.items()) {
            (Some((a, x)), Some((b, y))) => Shape::Items { count: a.max(b), element: x.max(y) },
            _ => Shape::Bounded(size),
        },
        // One element of a list.
        ("_[_]" | "_[?_]", _, [list, _]) => match list.shape.items() {
            Some((_, element)) => Shape::Bounded(element),
            None => Shape::Bounded(size),
        },
        _ => Shape::Bounded(size),
    };
    Estimate { cost: arguments.saturating_add(walk), shape }
}

/// Registers the Kubernetes functions this module adds to the crate's environment.
fn kubernetes_library(env: &mut Env) -> Result<(), cel::DeclarationError> {
    env.add_member_overload("isSorted", "list_is_sorted_bool", LIST_TYPE, vec![], is_sorted)?;
    env.add_member_overload("sum", "list_sum", LIST_TYPE, vec![], sum)?;
    env.add_member_overload("min", "list_min", LIST_TYPE, vec![], min)?;
    env.add_member_overload("max", "list_max", LIST_TYPE, vec![], max)?;
    env.add_member_overload("indexOf", "list_a_index_of_int", LIST_TYPE, vec![DYN_TYPE], index_of)?;
    env.add_member_overload(
        "lastIndexOf",
        "list_a_last_index_of_int",
        LIST_TYPE,
        vec![DYN_TYPE],
        last_index_of,
    )?;
    env.add_member_overload("find", "string_find_string", STRING_TYPE, vec![STRING_TYPE], find)?;
    env.add_member_overload("findAll", "string_find_all_string", STRING_TYPE, vec![STRING_TYPE], find_all)?;
    env.add_member_overload(
        "findAll",
        "string_find_all_string_int",
        STRING_TYPE,
        vec![STRING_TYPE, INT_TYPE],
        find_all,
    )?;
    env.add_overload("sets.contains", "list_sets_contains_list", vec![LIST_TYPE, LIST_TYPE], sets_contains)?;
    env.add_overload(
        "sets.equivalent",
        "list_sets_equivalent_list",
        vec![LIST_TYPE, LIST_TYPE],
        sets_equivalent,
    )?;
    env.add_overload(
        "sets.intersects",
        "list_sets_intersects_list",
        vec![LIST_TYPE, LIST_TYPE],
        sets_intersects,
    )?;
    quantity_library(env)
}

/// The arguments of a library call as [`Value`]s.
fn values(args: &[CowVal<'_, '_>]) -> Result<Vec<Value>, ExecutionError> {
    args.iter().map(|arg| Value::try_from(&**arg)).collect()
}

fn owned<'b, 'v>(value: Value) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let boxed: Box<dyn Val> = value.try_into()?;
    Ok(CowVal::Owned(boxed))
}

/// A CEL list's elements, shared.
type Items = Arc<Vec<Value>>;

fn list_items(value: &Value, function: &str) -> Result<Items, ExecutionError> {
    match value {
        Value::List(items) => Ok(Arc::clone(items)),
        other => {
            Err(ExecutionError::function_error(function, format!("expected a list, got {}", other.type_of())))
        }
    }
}

fn compare(a: &Value, b: &Value, function: &str) -> Result<std::cmp::Ordering, ExecutionError> {
    a.partial_cmp(b)
        .ok_or_else(|| ExecutionError::function_error(function, "list elements must be comparable"))
}

/// `isSorted` (lists.go): true when every element is at most the next.
fn is_sorted<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let args = values(&args)?;
    let items = list_items(&args[0], "isSorted")?;
    for pair in items.windows(2) {
        if compare(&pair[0], &pair[1], "isSorted")? == std::cmp::Ordering::Greater {
            return owned(Value::Bool(false));
        }
    }
    owned(Value::Bool(true))
}

/// `sum` (lists.go): the sum of ints, uints or doubles; 0 for an empty list.
fn sum<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let args = values(&args)?;
    let items = list_items(&args[0], "sum")?;
    let mut total = match items.first() {
        None | Some(Value::Int(_)) => Value::Int(0),
        Some(Value::UInt(_)) => Value::UInt(0),
        Some(Value::Float(_)) => Value::Float(0.0),
        Some(other) => {
            return Err(ExecutionError::function_error("sum", format!("cannot sum {}", other.type_of())));
        }
    };
    for item in items.iter() {
        total = match (&total, item) {
            (Value::Int(a), Value::Int(b)) => Value::Int(
                a.checked_add(*b).ok_or_else(|| ExecutionError::function_error("sum", "integer overflow"))?,
            ),
            (Value::UInt(a), Value::UInt(b)) => Value::UInt(
                a.checked_add(*b)
                    .ok_or_else(|| ExecutionError::function_error("sum", "unsigned integer overflow"))?,
            ),
            (Value::Float(a), Value::Float(b)) => Value::Float(a + b),
            (_, other) => {
                return Err(ExecutionError::function_error("sum", format!("cannot add {}", other.type_of())));
            }
        };
    }
    owned(total)
}

fn extreme<'b, 'v>(
    args: Vec<CowVal<'b, 'v>>,
    function: &str,
    keep: std::cmp::Ordering,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let args = values(&args)?;
    let items = list_items(&args[0], function)?;
    let mut best = items.first().ok_or_else(|| {
        ExecutionError::function_error(function, format!("{function} called on empty list"))
    })?;
    for item in items.iter().skip(1) {
        if compare(item, best, function)? == keep {
            best = item;
        }
    }
    owned(best.clone())
}

/// `min` (lists.go): the least element; an error on an empty list.
fn min<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    extreme(args, "min", std::cmp::Ordering::Less)
}

/// `max` (lists.go): the greatest element; an error on an empty list.
fn max<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    extreme(args, "max", std::cmp::Ordering::Greater)
}

/// `indexOf` on a list (lists.go): the first index of an equal element, or -1.
fn index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let args = values(&args)?;
    let items = list_items(&args[0], "indexOf")?;
    let found = items.iter().position(|item| item == &args[1]);
    owned(Value::Int(found.map_or(-1, |i| i as i64)))
}

/// `lastIndexOf` on a list (lists.go): the last index of an equal element, or -1.
fn last_index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let args = values(&args)?;
    let items = list_items(&args[0], "lastIndexOf")?;
    let found = items.iter().rposition(|item| item == &args[1]);
    owned(Value::Int(found.map_or(-1, |i| i as i64)))
}

fn pattern(value: &Value, function: &str) -> Result<regex::Regex, ExecutionError> {
    let Value::String(source) = value else {
        return Err(ExecutionError::function_error(function, "the pattern must be a string"));
    };
    regex::Regex::new(source).map_err(|e| ExecutionError::function_error(function, e.to_string()))
}

fn text(value: &Value) -> &str {
    match value {
        Value::String(s) => s.as_str(),
        _ => "",
    }
}

/// `find` (regex.go): the first match of the pattern, or the empty string.
fn find<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let args = values(&args)?;
    let found = pattern(&args[1], "find")?.find(text(&args[0])).map(|m| m.as_str().to_string());
    owned(Value::String(Arc::new(found.unwrap_or_default())))
}

/// `findAll` (regex.go): every match, or at most `n` of them when `n` is not negative.
fn find_all<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let args = values(&args)?;
    let limit = match args.get(2) {
        Some(Value::Int(n)) if *n >= 0 => usize::try_from(*n).unwrap_or(usize::MAX),
        _ => usize::MAX,
    };
    let matches: Vec<Value> = pattern(&args[1], "findAll")?
        .find_iter(text(&args[0]))
        .take(limit)
        .map(|m| Value::String(Arc::new(m.as_str().to_string())))
        .collect();
    owned(Value::List(Arc::new(matches)))
}

fn two_lists(args: Vec<CowVal<'_, '_>>, function: &str) -> Result<(Items, Items), ExecutionError> {
    let args = values(&args)?;
    Ok((list_items(&args[0], function)?, list_items(&args[1], function)?))
}

/// `sets.contains(a, b)` (cel-go ext/sets.go): every element of `b` is in `a`.
fn sets_contains<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (a, b) = two_lists(args, "sets.contains")?;
    owned(Value::Bool(b.iter().all(|x| a.contains(x))))
}

/// `sets.equivalent(a, b)`: each list contains every element of the other.
fn sets_equivalent<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (a, b) = two_lists(args, "sets.equivalent")?;
    owned(Value::Bool(b.iter().all(|x| a.contains(x)) && a.iter().all(|x| b.contains(x))))
}

/// `sets.intersects(a, b)`: the lists share an element.
fn sets_intersects<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (a, b) = two_lists(args, "sets.intersects")?;
    owned(Value::Bool(b.iter().any(|x| a.contains(x))))
}

/// A Kubernetes quantity as a CEL value: upstream's `kubernetes.Quantity` type
/// (`k8s.io/apiserver/pkg/cel/quantity.go`), equal to another when their values are equal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CelQuantity(pub crate::quantity::Quantity);

impl Opaque for CelQuantity {
    fn runtime_type_name(&self) -> &str {
        QUANTITY_TYPE_NAME
    }

    fn json(&self) -> Option<Json> {
        Some(Json::String(self.0.to_string()))
    }
}

/// The CEL type name of [`CelQuantity`], as upstream names it.
const QUANTITY_TYPE_NAME: &str = "kubernetes.Quantity";

/// Registers Kubernetes' quantity library (`pkg/cel/library/quantity.go` of v1.33).
fn quantity_library(env: &mut Env) -> Result<(), cel::DeclarationError> {
    let quantity = || Type::new_opaque_type(QUANTITY_TYPE_NAME);
    env.add_type(quantity())?;
    env.add_overload("quantity", "string_to_quantity", vec![STRING_TYPE], quantity_of)?;
    env.add_overload("isQuantity", "is_quantity_string", vec![STRING_TYPE], is_quantity)?;
    // Upstream declares `sign` as a global overload (`cel.Overload`), though its doc writes it
    // as a method.
    env.add_overload("sign", "quantity_sign", vec![quantity()], quantity_sign)?;
    env.add_member_overload(
        "isGreaterThan",
        "quantity_is_greater_than",
        quantity(),
        vec![quantity()],
        greater,
    )?;
    env.add_member_overload("isLessThan", "quantity_is_less_than", quantity(), vec![quantity()], less)?;
    env.add_member_overload("compareTo", "quantity_compare_to", quantity(), vec![quantity()], compare_to)?;
    env.add_member_overload("asApproximateFloat", "quantity_get_float", quantity(), vec![], approximate)?;
    env.add_member_overload("asInteger", "quantity_get_int", quantity(), vec![], as_integer)?;
    env.add_member_overload("isInteger", "quantity_is_integer", quantity(), vec![], is_integer)?;
    env.add_member_overload("add", "quantity_add", quantity(), vec![quantity()], add)?;
    env.add_member_overload("add", "quantity_add_int", quantity(), vec![INT_TYPE], add)?;
    env.add_member_overload("sub", "quantity_sub", quantity(), vec![quantity()], sub)?;
    env.add_member_overload("sub", "quantity_sub_int", quantity(), vec![INT_TYPE], sub)?;
    Ok(())
}

/// The quantity of a library call's argument: a `kubernetes.Quantity`, or an int (`add(20)`).
fn quantity_arg(value: &Value, function: &str) -> Result<crate::quantity::Quantity, ExecutionError> {
    match value {
        Value::Opaque(opaque) => opaque
            .downcast_ref::<CelQuantity>()
            .map(|q| q.0)
            .ok_or_else(|| ExecutionError::function_error(function, "expected a quantity")),
        Value::Int(units) => Ok(crate::quantity::Quantity::from_units(*units)),
        other => Err(ExecutionError::function_error(
            function,
            format!("expected a quantity, got {}", other.type_of()),
        )),
    }
}

fn quantity_value<'b, 'v>(quantity: crate::quantity::Quantity) -> Result<CowVal<'b, 'v>, ExecutionError> {
    owned(Value::Opaque(Arc::new(CelQuantity(quantity))))
}

/// `quantity(string)`: parsed as `resource.ParseQuantity` parses, or its error.
fn quantity_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let args = values(&args)?;
    let parsed = text(&args[0])
        .parse()
        .map_err(|e: crate::quantity::Error| ExecutionError::function_error("quantity", e.to_string()))?;
    quantity_value(parsed)
}

/// `isQuantity(string)`: true exactly when `quantity` would not fail.
fn is_quantity<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let args = values(&args)?;
    owned(Value::Bool(text(&args[0]).parse::<crate::quantity::Quantity>().is_ok()))
}

fn two_quantities(
    args: Vec<CowVal<'_, '_>>,
    function: &str,
) -> Result<(crate::quantity::Quantity, crate::quantity::Quantity), ExecutionError> {
    let args = values(&args)?;
    Ok((quantity_arg(&args[0], function)?, quantity_arg(&args[1], function)?))
}

fn quantity_sign<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let q = quantity_arg(&values(&args)?[0], "sign")?;
    owned(Value::Int(q.nanos().signum() as i64))
}

fn greater<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (a, b) = two_quantities(args, "isGreaterThan")?;
    owned(Value::Bool(a > b))
}

fn less<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (a, b) = two_quantities(args, "isLessThan")?;
    owned(Value::Bool(a < b))
}

fn compare_to<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (a, b) = two_quantities(args, "compareTo")?;
    owned(Value::Int(a.cmp(&b) as i64))
}

/// `asApproximateFloat`: the value as a double, precision lost where it must be.
fn approximate<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let q = quantity_arg(&values(&args)?[0], "asApproximateFloat")?;
    owned(Value::Float(q.nanos() as f64 / 1e9))
}

/// The value as an int64, when it is whole and fits (`resource.Quantity.AsInt64`).
fn whole(q: crate::quantity::Quantity) -> Option<i64> {
    q.is_integer().then(|| i64::try_from(q.nanos() / 1_000_000_000).ok()).flatten()
}

fn as_integer<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let q = quantity_arg(&values(&args)?[0], "asInteger")?;
    let value = whole(q)
        .ok_or_else(|| ExecutionError::function_error("asInteger", "cannot convert value to integer"))?;
    owned(Value::Int(value))
}

fn is_integer<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let q = quantity_arg(&values(&args)?[0], "isInteger")?;
    owned(Value::Bool(whole(q).is_some()))
}

fn add<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (a, b) = two_quantities(args, "add")?;
    quantity_value(a.checked_add(b).ok_or_else(|| ExecutionError::function_error("add", "integer overflow"))?)
}

fn sub<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (a, b) = two_quantities(args, "sub")?;
    quantity_value(a.checked_sub(b).ok_or_else(|| ExecutionError::function_error("sub", "integer overflow"))?)
}

/// A field path an expression reads, starting at a variable: `object.status.readyReplicas`,
/// `quota.spec.hard["requests.cpu"]`, or `p.spec.containers` where `p` ranges over a list.
///
/// Lint resolves each against the schema of the objects bound there; grading shows the values
/// the ones rooted at a bound variable read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// Where the path starts.
    pub root: SelectionRoot,
    /// Each field after the root (an index by a string literal counts as a field).
    pub fields: Vec<SelectedField>,
}

/// One field of a [`Selection`] and where it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectedField {
    /// The field name.
    pub name: String,
    /// 1-based line in the expression.
    pub line: usize,
    /// 1-based column in that line.
    pub column: usize,
}

/// The start of a [`Selection`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SelectionRoot {
    /// A variable the expression was compiled with.
    Variable(String),
    /// A comprehension variable (`p` of `pods.all(p, …)`) ranging over the elements of this
    /// selection.
    ElementOf(Box<Selection>),
}

impl Selection {
    /// The selection as CEL text, when it starts at a variable (`quota.spec.hard["requests.cpu"]`);
    /// evaluated with the same bindings, it gives the value read.
    pub fn text(&self) -> Option<String> {
        let SelectionRoot::Variable(root) = &self.root else { return None };
        let mut text = root.clone();
        for SelectedField { name: field, .. } in &self.fields {
            let identifier = field.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && field.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if identifier {
                text.push('.');
                text.push_str(field);
            } else {
                text.push_str(&format!("[{}]", Json::String(field.clone())));
            }
        }
        Some(text)
    }
}

impl Expression {
    /// The field paths the expression reads, each as far as it goes (`object.status` within
    /// `object.status.readyReplicas` is not listed apart), in source order.
    pub fn selections(&self) -> Vec<Selection> {
        let mut found = Vec::new();
        let mut scope = Vec::new();
        let walker = Selections { program: &self.program, source: &self.source };
        walker.collect(self.program.expression(), &mut scope, &mut found);
        found
    }

    /// True when the expression calls the function `name` (`fact`, `quantity`).
    pub fn calls(&self, name: &str) -> bool {
        self.program.references().has_function(name)
    }
}

/// Walks an expression for its [`Selection`]s.
struct Selections<'p> {
    program: &'p Program,
    source: &'p str,
}

/// A comprehension variable in scope: what it ranges over, if it is a selection's elements.
type Bound<'e> = (&'e str, Option<Selection>);

impl<'p> Selections<'p> {
    fn position(&self, id: u64) -> (usize, usize) {
        let offset = self.program.source_info().offset_for(id).map_or(0, |(start, _)| start as usize);
        line_column(self.source, offset)
    }

    /// Where a selected field's name is written: a select node is recorded at its `.` (or `?.`),
    /// the name follows.
    fn field_position(&self, id: u64) -> (usize, usize) {
        let offset = self.program.source_info().offset_for(id).map_or(0, |(start, _)| start as usize);
        let rest: String = self.source.chars().skip(offset).take(2).collect();
        let skip = if rest.starts_with("?.") { 2 } else { usize::from(rest.starts_with('.')) };
        line_column(self.source, offset + skip)
    }

    /// The root identifier and the fields of `expr` when it is a chain of field selections.
    fn chain<'e>(&self, expr: &'e IdedExpr) -> Option<(&'e str, Vec<SelectedField>)> {
        match &expr.expr {
            Expr::Ident(name) => Some((name.as_str(), Vec::new())),
            Expr::Select(select) => {
                let (root, mut fields) = self.chain(&select.operand)?;
                let (line, column) = self.field_position(expr.id);
                fields.push(SelectedField { name: select.field.clone(), line, column });
                Some((root, fields))
            }
            Expr::Call(call)
                if call.target.is_none()
                    && call.args.len() == 2
                    && matches!(call.func_name.as_str(), "_[_]" | "_[?_]" | "_?._") =>
            {
                let Expr::Literal(LiteralValue::String(key)) = &call.args[1].expr else { return None };
                let (root, mut fields) = self.chain(&call.args[0])?;
                let (line, column) = self.position(call.args[1].id);
                fields.push(SelectedField { name: key.inner().to_string(), line, column });
                Some((root, fields))
            }
            _ => None,
        }
    }

    fn collect<'e>(&self, expr: &'e IdedExpr, scope: &mut Vec<Bound<'e>>, found: &mut Vec<Selection>) {
        if let Some(selection) = self.selection(expr, scope) {
            found.push(selection);
            return;
        }
        match &expr.expr {
            Expr::Call(call) => {
                if let Some(target) = call.target.as_deref() {
                    self.collect(target, scope, found);
                }
                for arg in &call.args {
                    self.collect(arg, scope, found);
                }
            }
            Expr::Select(select) => self.collect(&select.operand, scope, found),
            Expr::List(list) => list.elements.iter().for_each(|e| self.collect(e, scope, found)),
            Expr::Map(map) => entries(&map.entries).for_each(|e| self.collect(e, scope, found)),
            Expr::Struct(object) => entries(&object.entries).for_each(|e| self.collect(e, scope, found)),
            Expr::Comprehension(c) => self.comprehension(c, scope, found),
            Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
        }
    }

    fn comprehension<'e>(
        &self,
        c: &'e ComprehensionExpr,
        scope: &mut Vec<Bound<'e>>,
        found: &mut Vec<Selection>,
    ) {
        self.collect(&c.iter_range, scope, found);
        self.collect(&c.accu_init, scope, found);
        let range = self.selection(&c.iter_range, scope);
        let depth = scope.len();
        // Two-variable comprehensions bind an index or key first: the element is the second.
        match c.iter_var2.as_deref() {
            Some(second) => scope.extend([(c.iter_var.as_str(), None), (second, range)]),
            None => scope.push((c.iter_var.as_str(), range)),
        }
        scope.push((c.accu_var.as_str(), None));
        for part in [&c.loop_cond, &c.loop_step, &c.result] {
            self.collect(part, scope, found);
        }
        scope.truncate(depth);
    }

    /// `expr` as a selection, when it is a chain from a variable (a bare variable included) or
    /// from a comprehension variable ranging over a selection.
    fn selection<'e>(&self, expr: &'e IdedExpr, scope: &[Bound<'e>]) -> Option<Selection> {
        let (root, fields) = self.chain(expr)?;
        let root = match scope.iter().rev().find(|(name, _)| *name == root) {
            Some((_, Some(range))) => SelectionRoot::ElementOf(Box::new(range.clone())),
            Some((_, None)) => return None,
            None if TYPE_NAMES.contains(&root) || NAMESPACES.contains(&root) => return None,
            None => SelectionRoot::Variable(root.to_string()),
        };
        Some(Selection { root, fields })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_quantity_library_compares_and_adds_exactly() {
        let this = json!({"cpu": ["250m", "0.25", "500m"], "hard": "1"});
        let truths = [
            "quantity('1Gi') == quantity('1024Mi')",
            "quantity('200M').compareTo(quantity('0.2G')) == 0",
            "quantity('50M').compareTo(quantity('50Mi')) == -1",
            "quantity('150Mi').isGreaterThan(quantity('100Mi'))",
            "quantity('50M').isLessThan(quantity('100M'))",
            "quantity('50k').add(quantity('20k')) == quantity('70k')",
            "quantity('50k').add(20) == quantity('50020')",
            "quantity('50k').sub(20000) == quantity('30k')",
            "quantity('50k').add(20).sub(quantity('100k')).sub(-50000) == quantity('20')",
            "quantity('50k').asInteger() == 50000",
            "quantity('50k').sub(20000).asApproximateFloat() == 30000.0",
            "!quantity('1.5').isInteger() && quantity('2').isInteger()",
            "sign(quantity('-1m')) == -1 && sign(quantity('0')) == 0",
            "isQuantity('1.3Gi') && !isQuantity('1,3G') && !isQuantity('200K')",
            "self.cpu.map(c, quantity(c).asApproximateFloat()).sum() <= quantity(self.hard).asApproximateFloat()",
        ];
        for truth in truths {
            assert_eq!(eval(truth, &this), Ok(json!(true)), "{truth}");
        }
        assert_eq!(eval("quantity('1500m').add(quantity('1')) == quantity('2500m')", &this), Ok(json!(true)));
        assert!(eval("quantity('Three')", &this).unwrap_err().to_string().contains("quantities must match"));
        assert!(
            eval("quantity('1.5').asInteger()", &this)
                .unwrap_err()
                .to_string()
                .contains("cannot convert value to integer")
        );
    }

    fn fields(selection: &Selection) -> Vec<&str> {
        selection.fields.iter().map(|field| field.name.as_str()).collect()
    }

    #[test]
    fn selections_are_the_field_paths_read_from_variables_and_comprehension_variables() {
        let expression = Expression::compile(
            "object.status.updatedReplicas == object.spec.replicas && \n\
             pods.all(p, p.spec.containers.all(c, has(c.resources.requests))) && \n\
             quota.spec.hard['requests.cpu'] != '' && [1].exists(x, x > 0)",
            &["object", "pods", "quota"],
        )
        .unwrap();
        let selections = expression.selections();
        let texts: Vec<Option<String>> = selections.iter().map(Selection::text).collect();
        assert_eq!(
            texts,
            [
                Some("object.status.updatedReplicas".to_string()),
                Some("object.spec.replicas".to_string()),
                Some("pods".to_string()),
                None,
                None,
                Some("quota.spec.hard[\"requests.cpu\"]".to_string()),
            ]
        );
        // `c` ranges over `p.spec.containers`, and `p` over `pods`.
        let SelectionRoot::ElementOf(range) = &selections[4].root else { panic!("{:?}", selections[4]) };
        assert_eq!(fields(range), ["spec", "containers"]);
        assert_eq!(fields(&selections[4]), ["resources", "requests"]);
        assert!(
            matches!(&range.root, SelectionRoot::ElementOf(outer) if outer.root == SelectionRoot::Variable("pods".into()))
        );
        // Where the fields are written: the second line holds `p.spec.containers`.
        let field = &selections[3].fields[1];
        assert_eq!((field.line, field.column), (2, 20));
        assert!(expression.uses("quota") && !expression.calls("fact"));
    }

    #[test]
    fn a_bound_predicate_is_called_with_two_strings() {
        let expression =
            Expression::compile("fact('node', self) && !fact('node', 'other')", &["self"]).unwrap();
        assert!(expression.calls("fact"));
        let same = StringPredicate(Arc::new(|name: &str, value: &str| name == "node" && value == "gpu-1"));
        let bindings = Bindings::new().json("self", &json!("gpu-1")).predicate("fact", same);
        assert!(expression.evaluate_bool(&bindings).unwrap());
        let unbound = Bindings::new().json("self", &json!("gpu-1"));
        assert!(expression.evaluate_bool(&unbound).is_err());
    }

    fn eval(source: &str, this: &Json) -> Result<Json> {
        Expression::compile(source, &["self"])?.evaluate(&Bindings::new().json("self", this))
    }

    #[test]
    fn json_values_bind_as_kubernetes_decodes_them() {
        let this = json!({"i": 3, "d": 2.5, "s": "x", "b": true, "n": null, "l": [1, 2], "m": {"k": "v"}});
        assert_eq!(eval("type(self.i) == int && type(self.d) == double", &this).unwrap(), json!(true));
        assert_eq!(eval("self.i + 1", &this).unwrap(), json!(4));
        assert_eq!(eval("self.d * 2.0", &this).unwrap(), json!(5.0));
        assert_eq!(eval("self.s + 'y'", &this).unwrap(), json!("xy"));
        assert_eq!(eval("self.n == null && self.b", &this).unwrap(), json!(true));
        assert_eq!(eval("self.l.map(x, x * 10)", &this).unwrap(), json!([10, 20]));
        assert_eq!(eval("self.m", &this).unwrap(), json!({"k": "v"}));
        assert_eq!(eval("has(self.m.k) && !has(self.m.z)", &this).unwrap(), json!(true));
        assert_eq!(eval("self.?missing.orValue(7)", &this).unwrap(), json!(7));
    }

    #[test]
    fn schema_typed_values_follow_the_schema() {
        let schema = json!({"type": "object", "properties": {
            "ratio": {"type": "number"}, "max-size": {"type": "integer"}, "if": {"type": "string"},
            "a.b": {"type": "string"}, "data": {"type": "string", "format": "byte"}}});
        let value = json!({"ratio": 3, "max-size": 4, "if": "x", "a.b": "y", "data": "aGk=", "1bad": 1});
        let bindings = Bindings::new().typed("self", &value, &schema);
        let run = |source: &str| Expression::compile(source, &["self"]).unwrap().evaluate(&bindings).unwrap();
        assert_eq!(run("type(self.ratio) == double"), json!(true));
        assert_eq!(run("self.max__dash__size"), json!(4));
        assert_eq!(run("self.__if__ + self.a__dot__b"), json!("xy"));
        assert_eq!(run("self.data == b'hi'"), json!(true));
        assert_eq!(run("size(self)"), json!(5), "a property CEL cannot name is left out");
    }

    #[test]
    fn property_names_escape_as_upstream() {
        // escaping_test.go TestEscaping
        for (name, escaped) in [
            ("self", Some("self")),
            ("_if", Some("_if")),
            ("if", Some("__if__")),
            ("has", Some("has")),
            ("foo-bar", Some("foo__dash__bar")),
            ("foo.bar", Some("foo__dot__bar")),
            ("foo/bar", Some("foo__slash__bar")),
            ("__foo__", Some("__underscores__foo__underscores__")),
            ("a___b", Some("a__underscores___b")),
            ("1a", None),
            ("a b", None),
            ("", None),
        ] {
            assert_eq!(escape_property(name).as_deref(), escaped, "{name}");
        }
    }

    #[test]
    fn compile_errors_carry_positions() {
        let error = Expression::compile("self.a ==", &["self"]).unwrap_err();
        assert_eq!((error.errors[0].line, error.errors[0].column), (1, 10));
        assert!(error.to_string().starts_with("ERROR: <input>:1:10: Syntax error:"), "{error}");
        let error = Expression::compile("self.a == 1 &&\n  other > 2", &["self"]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "ERROR: <input>:2:3: undeclared reference to 'other' (in container '')\n |   other > 2\n | ..^"
        );
        assert!(Expression::compile("self.all(x, x > 0) && type(self) == list", &["self"]).is_ok());
        assert!(Expression::compile("sets.contains(self, [1])", &["self"]).is_ok());
    }

    #[test]
    fn runtime_errors_and_result_types() {
        assert_eq!(eval("self.missing", &json!({})).unwrap_err().to_string(), "no such key: missing");
        assert_eq!(eval("1 / self", &json!(0)).unwrap_err().to_string(), "division by zero");
        let rule = Expression::compile("self + 1", &["self"]).unwrap();
        let error = rule.evaluate_bool(&Bindings::new().json("self", &json!(1))).unwrap_err();
        assert_eq!(error, Error::ResultType { wanted: "bool", found: "int".into() });
        let message = Expression::compile("'too many: ' + string(self)", &["self"]).unwrap();
        assert_eq!(message.evaluate_string(&Bindings::new().json("self", &json!(3))).unwrap(), "too many: 3");
    }

    #[test]
    fn kubernetes_library_functions() {
        // pkg/cel/library/lists.go, regex.go; cel-go ext/sets.go
        let this = json!({"l": [1, 2, 3], "u": [3, 1], "s": "abc 123 def 456", "e": []});
        for (source, expected) in [
            ("self.l.isSorted()", json!(true)),
            ("self.u.isSorted()", json!(false)),
            ("self.l.sum()", json!(6)),
            ("self.e.sum()", json!(0)),
            ("self.u.min()", json!(1)),
            ("self.u.max()", json!(3)),
            ("self.l.indexOf(2)", json!(1)),
            ("[1, 2, 1].lastIndexOf(1)", json!(2)),
            ("self.l.indexOf(9)", json!(-1)),
            ("self.s.find('[0-9]+')", json!("123")),
            ("self.s.findAll('[0-9]+')", json!(["123", "456"])),
            ("self.s.findAll('[a-z]+', 1)", json!(["abc"])),
            ("sets.contains(self.l, [1, 3])", json!(true)),
            ("sets.contains(self.l, [4])", json!(false)),
            ("sets.equivalent(self.u, [1, 3, 3])", json!(true)),
            ("sets.intersects(self.l, self.u)", json!(true)),
            ("'a-b'.split('-')", json!(["a", "b"])),
            ("'Hello'.lowerAscii()", json!("hello")),
            ("self.s.matches('^abc')", json!(true)),
        ] {
            assert_eq!(eval(source, &this).unwrap(), expected, "{source}");
        }
        assert_eq!(
            eval("self.e.min()", &this).unwrap_err().to_string(),
            "Error executing function 'min': min called on empty list"
        );
    }

    #[test]
    fn a_runaway_expression_is_not_run() {
        let many: Vec<i64> = (0..2_000).collect();
        let this = json!({"l": many});
        assert_eq!(eval("self.l.all(x, x >= 0)", &this).unwrap(), json!(true));
        let nested = Expression::compile("self.l.all(x, self.l.all(y, x + y >= 0))", &["self"]).unwrap();
        let bindings = Bindings::new().json("self", &this);
        assert!(nested.estimated_cost(&bindings) > PER_CALL_COST_LIMIT);
        match nested.evaluate(&bindings) {
            Err(Error::CostLimit { estimated, limit }) => assert!(estimated > limit),
            other => panic!("expected the cost limit, got {other:?}"),
        }
        // Growth inside a comprehension counts too: each step doubles nothing, but a map over a
        // map multiplies.
        let growing = Expression::compile("self.l.map(x, self.l.map(y, y)).size() > 0", &["self"]).unwrap();
        assert!(matches!(growing.evaluate(&bindings), Err(Error::CostLimit { .. })));
        // A filter then a map iterates over the elements the filter kept, not over their size.
        let objects: Vec<Json> = (0..20)
            .map(|i| json!({"name": format!("object-{i}"), "spec": {"note": "x".repeat(200), "size": i}}))
            .collect();
        let chained = Expression::compile(
            "self.filter(o, o.spec.size > 4).map(o, o.name).filter(n, n.startsWith('object')).size() == 15",
            &["self"],
        )
        .unwrap();
        let listed = Bindings::new().json("self", &json!(objects));
        assert!(chained.estimated_cost(&listed) < PER_CALL_COST_LIMIT, "{}", chained.estimated_cost(&listed));
        assert_eq!(chained.evaluate(&listed).unwrap(), json!(true));
        // The same rules on small data run.
        let small = Bindings::new().json("self", &json!({"l": [1, 2, 3]}));
        assert_eq!(nested.evaluate(&small).unwrap(), json!(true));
        assert!(nested.estimated_cost(&small) < 1_000);
    }

    #[test]
    fn optional_bindings() {
        let rule =
            Expression::compile("!oldSelf.hasValue() || self >= oldSelf.value()", &["self", "oldSelf"])
                .unwrap();
        let schema = json!({"type": "integer"});
        let bind = |old: Option<&Json>| {
            Bindings::new().typed("self", &json!(2), &schema).optional_typed("oldSelf", old, &schema)
        };
        assert!(rule.evaluate_bool(&bind(None)).unwrap());
        assert!(rule.evaluate_bool(&bind(Some(&json!(1)))).unwrap());
        assert!(!rule.evaluate_bool(&bind(Some(&json!(3)))).unwrap());
    }

    #[test]
    fn a_rule_knows_whether_it_is_a_transition_rule() {
        let rule = Expression::compile("self >= oldSelf", &["self", "oldSelf"]).unwrap();
        assert!(rule.uses("oldSelf"));
        assert!(!Expression::compile("self > 0", &["self", "oldSelf"]).unwrap().uses("oldSelf"));
        assert!(Expression::compile("self >= oldSelf", &["self"]).is_err());
    }
}
