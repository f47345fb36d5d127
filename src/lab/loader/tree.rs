//! A YAML document as a tree of positions: every map key and every node with its line and column, so a problem about a field deep inside an expected object points at that field.
//!
//! The model ([`crate::lab::model`]) keeps positions only where the loader needs them; lint's
//! schema check reads the same text again into this tree, which serde-saphyr fills with the
//! location of every key ([`Spanned`] works at any depth).

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::{Location, Spanned};

/// One YAML node and where it starts.
#[derive(Debug, Clone)]
pub struct YamlNode {
    /// Where the node is written.
    pub location: Location,
    /// What it holds.
    pub shape: YamlShape,
}

/// What a YAML node holds.
#[derive(Debug, Clone)]
pub enum YamlShape {
    /// A map: each key with its position, and its value.
    Map(Vec<(Spanned<String>, YamlNode)>),
    /// A sequence.
    List(Vec<YamlNode>),
    /// `null` (or nothing).
    Null,
    /// Any other scalar.
    Scalar,
}

impl YamlNode {
    /// Reads a document's text; `None` when it does not parse (the loader has reported why).
    pub fn parse(text: &str) -> Option<YamlNode> {
        serde_saphyr::from_str::<Spanned<Shape>>(text).ok().map(YamlNode::from)
    }

    /// The value of `key` in a map, with the key's position.
    pub fn entry(&self, key: &str) -> Option<(&Spanned<String>, &YamlNode)> {
        match &self.shape {
            YamlShape::Map(entries) => entries.iter().find(|(k, _)| k.value == key).map(|(k, v)| (k, v)),
            _ => None,
        }
    }

    /// The value of `key` in a map.
    pub fn get(&self, key: &str) -> Option<&YamlNode> {
        self.entry(key).map(|(_, value)| value)
    }

    /// The `index`-th element of a sequence.
    pub fn at(&self, index: usize) -> Option<&YamlNode> {
        match &self.shape {
            YamlShape::List(items) => items.get(index),
            _ => None,
        }
    }

    /// The node at a path of keys and indices (`["tasks", "0", "expect"]`: a number is an index
    /// into a sequence, anything else a key).
    pub fn path(&self, steps: &[&str]) -> Option<&YamlNode> {
        steps.iter().try_fold(self, |node, step| match (&node.shape, step.parse::<usize>()) {
            (YamlShape::List(_), Ok(index)) => node.at(index),
            _ => node.get(step),
        })
    }
}

/// The deserialized form, converted into [`YamlNode`].
enum Shape {
    Map(Vec<(Spanned<String>, Spanned<Shape>)>),
    List(Vec<Spanned<Shape>>),
    Null,
    Scalar,
}

impl From<Spanned<Shape>> for YamlNode {
    fn from(spanned: Spanned<Shape>) -> YamlNode {
        let shape = match spanned.value {
            Shape::Map(entries) => {
                YamlShape::Map(entries.into_iter().map(|(key, value)| (key, YamlNode::from(value))).collect())
            }
            Shape::List(items) => YamlShape::List(items.into_iter().map(YamlNode::from).collect()),
            Shape::Null => YamlShape::Null,
            Shape::Scalar => YamlShape::Scalar,
        };
        YamlNode { location: spanned.referenced, shape }
    }
}

impl<'de> Deserialize<'de> for Shape {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ShapeVisitor)
    }
}

struct ShapeVisitor;

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = Shape;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<Spanned<String>>()? {
            entries.push((key, map.next_value::<Spanned<Shape>>()?));
        }
        Ok(Shape::Map(entries))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Spanned<Shape>>()? {
            items.push(item);
        }
        Ok(Shape::List(items))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Shape, E> {
        Ok(Shape::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Shape, E> {
        Ok(Shape::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Shape, D::Error> {
        Shape::deserialize(deserializer)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Shape, E> {
        Ok(Shape::Scalar)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Shape, E> {
        Ok(Shape::Scalar)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Shape, E> {
        Ok(Shape::Scalar)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Shape, E> {
        Ok(Shape::Scalar)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Shape, E> {
        Ok(Shape::Scalar)
    }

    fn visit_string<E: de::Error>(self, _: String) -> Result<Shape, E> {
        Ok(Shape::Scalar)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_has_its_line_and_column() {
        let tree = YamlNode::parse("a:\n  b: 1\n  c: [x, {d: null}]\ne: {f: 2, \"g.h\": 3}\n").unwrap();
        let (key, _) = tree.entry("a").unwrap();
        assert_eq!((key.referenced.line(), key.referenced.column()), (1, 1));
        let (key, _) = tree.get("a").unwrap().entry("c").unwrap();
        assert_eq!((key.referenced.line(), key.referenced.column()), (3, 3));
        let d = tree.path(&["a", "c", "1"]).unwrap().entry("d").unwrap();
        assert_eq!((d.0.referenced.line(), d.0.referenced.column()), (3, 11));
        assert!(matches!(d.1.shape, YamlShape::Null));
        let (key, _) = tree.get("e").unwrap().entry("g.h").unwrap();
        assert_eq!((key.referenced.line(), key.referenced.column()), (4, 11));
        assert!(YamlNode::parse("a: [").is_none());
    }
}
