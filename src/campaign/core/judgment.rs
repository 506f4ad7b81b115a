//! A judgment as the campaign stores it: opaque JSON owned by `campaign`, so that the result
//! file of a judge call ([`super::store::Output::Judgment`]) names no type of the experiment
//! that produces and reads it.
//!
//! The JSON keeps its keys in the order they were written ([`Json::Object`] is a list of
//! pairs, not a sorted map), so a result file loads and is written back byte for byte, and
//! `output_sha256` (the sha256 of the compact JSON of the output) is the same before and after
//! the campaign took ownership of the shape. What the object means (arms, scores, evidence) is
//! the experiment's business: it converts to and from its own types with [`JudgmentRecord::of`]
//! and [`JudgmentRecord::to`].

use serde::de::{self, DeserializeOwned, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A JSON value whose objects keep their key order (unlike `serde_json::Value` without the
/// `preserve_order` feature, which sorts keys).
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Json>),
    /// Key/value pairs in document order.
    Object(Vec<(String, Json)>),
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => s.serialize_unit(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Number(n) => n.serialize(s),
            Json::String(t) => s.serialize_str(t),
            Json::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for i in items {
                    seq.serialize_element(i)?;
                }
                seq.end()
            }
            Json::Object(pairs) => serialize_pairs(pairs, s),
        }
    }
}

fn serialize_pairs<S: Serializer>(pairs: &[(String, Json)], s: S) -> Result<S::Ok, S::Error> {
    let mut map = s.serialize_map(Some(pairs.len()))?;
    for (k, v) in pairs {
        map.serialize_entry(k, v)?;
    }
    map.end()
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_none<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
        Json::deserialize(d)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
        Ok(Json::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
        Ok(Json::Number(n.into()))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
        Ok(Json::Number(n.into()))
    }
    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Json, E> {
        serde_json::Number::from_f64(n)
            .map(Json::Number)
            .ok_or_else(|| E::custom("a number that is not finite"))
    }
    fn visit_str<E>(self, t: &str) -> Result<Json, E> {
        Ok(Json::String(t.to_string()))
    }
    fn visit_string<E>(self, t: String) -> Result<Json, E> {
        Ok(Json::String(t))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(i) = seq.next_element()? {
            items.push(i);
        }
        Ok(Json::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut pairs = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Json>()? {
            pairs.push((k, v));
        }
        Ok(Json::Object(pairs))
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

/// One unit's judgment (`booktr experiment`'s blinded pairwise judge), as recorded: a JSON
/// object whose fields the campaign does not interpret. In a result file its fields follow the
/// output's `"kind": "judgment"`.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgmentRecord {
    fields: Vec<(String, Json)>,
}

impl JudgmentRecord {
    /// The record of `judgment` (any value that serialises as a JSON object), fields in the
    /// order it serialises them.
    ///
    /// Errors: `judgment` does not serialise to a JSON object.
    pub fn of<T: Serialize>(judgment: &T) -> anyhow::Result<JudgmentRecord> {
        match serde_json::from_slice::<Json>(&serde_json::to_vec(judgment)?)? {
            Json::Object(fields) => Ok(JudgmentRecord { fields }),
            other => anyhow::bail!("a judgment must be a JSON object, not {other:?}"),
        }
    }

    /// The record read back as `T`.
    ///
    /// Errors: the fields do not have `T`'s shape (naming the field, from serde).
    pub fn to<T: DeserializeOwned>(&self) -> anyhow::Result<T> {
        Ok(serde_json::from_slice(&serde_json::to_vec(self)?)?)
    }

    /// The fields, in recorded order.
    pub fn fields(&self) -> &[(String, Json)] {
        &self.fields
    }
}

impl Serialize for JudgmentRecord {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_pairs(&self.fields, s)
    }
}

impl<'de> Deserialize<'de> for JudgmentRecord {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<JudgmentRecord, D::Error> {
        match Json::deserialize(d)? {
            Json::Object(fields) => Ok(JudgmentRecord { fields }),
            _ => Err(de::Error::custom("a judgment must be a JSON object")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::core::store::Output;

    #[test]
    fn key_order_and_bytes_survive_a_round_trip_through_the_output() {
        // Keys deliberately out of alphabetical order, nested, with a float and a null.
        let text = r#"{"kind":"judgment","unit":"u1","x":"single_agent","verdict":{"y":{"score":5},"x":{"score":4,"evidence":"智能体 \"q\""}},"ratio":0.1234567890123,"none":null,"list":[3,{"b":1,"a":2}],"neg":-7}"#;
        let o: Output = serde_json::from_str(text).unwrap();
        let Output::Judgment(j) = &o else {
            panic!("{o:?}")
        };
        assert_eq!(j.fields()[0].0, "unit");
        assert_eq!(j.fields().len(), 7);
        assert_eq!(serde_json::to_string(&o).unwrap(), text);
        let pretty = serde_json::to_string_pretty(&o).unwrap();
        let v: serde_json::Value = serde_json::from_str(&pretty).unwrap();
        assert_eq!(v, serde_json::from_str::<serde_json::Value>(text).unwrap());
        assert!(pretty.find("\"y\"").unwrap() < pretty.find("\"x\": {").unwrap());
    }

    #[test]
    fn a_typed_value_converts_both_ways() {
        #[derive(Debug, PartialEq, Serialize, Deserialize)]
        struct T {
            z: u8,
            a: Vec<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            m: Option<bool>,
        }
        let t = T {
            z: 3,
            a: vec!["x".into()],
            m: None,
        };
        let r = JudgmentRecord::of(&t).unwrap();
        assert_eq!(serde_json::to_string(&r).unwrap(), r#"{"z":3,"a":["x"]}"#);
        assert_eq!(r.to::<T>().unwrap(), t);
        assert!(JudgmentRecord::of(&3).is_err());
        assert!(r.to::<Vec<u8>>().is_err());
    }
}
