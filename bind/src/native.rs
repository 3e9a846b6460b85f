//! The core's serde values straight to and from a language's own objects (dicts, lists,
//! strings, numbers, byte strings), with no JSON value or tree in between.
//!
//! The serde side (which serde call makes which object, how enums are tagged, how a value is
//! read back) is written once here; a binding only says how to make and look at its objects,
//! through [`Build`] and [`Look`]. Both sides are not human-readable, so a payload (the one
//! bytes value of the protocol, [`shardline_core::protocol::payload`]) is the language's byte
//! string by its type, never by the name of its key.
//!
//! Hand-written rather than a crate made for one language (pythonize, serde-wasm-bindgen):
//! each is tied to one runtime and version, and the human-readable ones would make payloads
//! base64 text.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeOwned, IntoDeserializer, Visitor};
use serde::ser::{self, Serialize};

/// A conversion failure.
#[derive(Debug)]
pub enum Error<E> {
    /// A value that is not what the core type needs (reading).
    Message(String),
    /// A native value of a type no core value has.
    Type(String),
    /// A core value serde could not write: a bug in its type, never the host's input.
    Serialize(String),
    /// The language runtime's own error, met on the way.
    Host(E),
}

impl<E> From<E> for Error<E> {
    fn from(e: E) -> Self {
        Error::Host(e)
    }
}

impl<E: fmt::Display> fmt::Display for Error<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Message(m) | Error::Type(m) | Error::Serialize(m) => f.write_str(m),
            Error::Host(e) => e.fmt(f),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> std::error::Error for Error<E> {}

impl<E: fmt::Debug + fmt::Display> ser::Error for Error<E> {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error::Serialize(msg.to_string())
    }
}

impl<E: fmt::Debug + fmt::Display> de::Error for Error<E> {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error::Message(msg.to_string())
    }
}

type Made<B> = Result<<B as Build>::Obj, <B as Build>::Err>;

/// How a language makes its objects. Names (struct fields, variants) are `&'static str`, so a
/// binding may make each once and keep it.
pub trait Build: Copy {
    type Obj;
    type Map;
    type Err: fmt::Debug + fmt::Display;
    fn null(self) -> Made<Self>;
    fn bool(self, v: bool) -> Made<Self>;
    fn i64(self, v: i64) -> Made<Self>;
    fn u64(self, v: u64) -> Made<Self>;
    fn f64(self, v: f64) -> Made<Self>;
    fn str(self, v: &str) -> Made<Self>;
    fn bytes(self, v: &[u8]) -> Made<Self>;
    /// A struct field or variant name.
    fn name(self, v: &'static str) -> Made<Self>;
    fn list(self, items: Vec<Self::Obj>) -> Made<Self>;
    fn map(self) -> Result<Self::Map, Self::Err>;
    fn insert(self, map: &mut Self::Map, k: Self::Obj, v: Self::Obj) -> Result<(), Self::Err>;
    fn done(self, map: Self::Map) -> Self::Obj;
}

/// A core value as native objects.
pub fn write<B: Build, T: Serialize + ?Sized>(b: B, v: &T) -> Result<B::Obj, Error<B::Err>> {
    v.serialize(Writer(b))
}

/// A core value read from native objects, without tracking where a failure is: wrap a
/// [`Reader`] in `serde_path_to_error` to name the field.
pub fn read<O: Look, T: DeserializeOwned>(o: O) -> Result<T, Error<O::Err>> {
    T::deserialize(Reader(o))
}

#[derive(Clone, Copy)]
pub struct Writer<B>(pub B);

impl<B: Build> Writer<B> {
    /// `{variant: value}`, serde's external tagging.
    fn tagged(self, variant: &'static str, value: B::Obj) -> Result<B::Obj, Error<B::Err>> {
        let mut m = self.0.map()?;
        self.0.insert(&mut m, self.0.name(variant)?, value)?;
        Ok(self.0.done(m))
    }
}

macro_rules! prims {
    ($($method:ident: $ty:ty => $make:ident),*) => {$(
        fn $method(self, v: $ty) -> Result<B::Obj, Error<B::Err>> {
            Ok(self.0.$make(v.into())?)
        }
    )*};
}

macro_rules! wide {
    ($($method:ident: $ty:ty),*) => {$(
        fn $method(self, v: $ty) -> Result<B::Obj, Error<B::Err>> {
            match (i64::try_from(v), u64::try_from(v)) {
                (Ok(i), _) => Ok(self.0.i64(i)?),
                (_, Ok(u)) => Ok(self.0.u64(u)?),
                _ => Err(ser::Error::custom(format!("integer {v} does not fit 64 bits"))),
            }
        }
    )*};
}

impl<B: Build> ser::Serializer for Writer<B> {
    type Ok = B::Obj;
    type Error = Error<B::Err>;
    type SerializeSeq = Items<B>;
    type SerializeTuple = Items<B>;
    type SerializeTupleStruct = Items<B>;
    type SerializeTupleVariant = Items<B>;
    type SerializeMap = Fields<B>;
    type SerializeStruct = Fields<B>;
    type SerializeStructVariant = Fields<B>;

    fn is_human_readable(&self) -> bool {
        false
    }
    prims! {
        serialize_bool: bool => bool, serialize_i8: i8 => i64, serialize_i16: i16 => i64,
        serialize_i32: i32 => i64, serialize_i64: i64 => i64, serialize_u8: u8 => u64,
        serialize_u16: u16 => u64, serialize_u32: u32 => u64, serialize_u64: u64 => u64,
        serialize_f32: f32 => f64, serialize_f64: f64 => f64
    }
    wide!(serialize_i128: i128, serialize_u128: u128);
    fn serialize_char(self, v: char) -> Result<B::Obj, Error<B::Err>> {
        Ok(self.0.str(v.encode_utf8(&mut [0; 4]))?)
    }
    fn serialize_str(self, v: &str) -> Result<B::Obj, Error<B::Err>> {
        Ok(self.0.str(v)?)
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<B::Obj, Error<B::Err>> {
        Ok(self.0.bytes(v)?)
    }
    fn serialize_none(self) -> Result<B::Obj, Error<B::Err>> {
        Ok(self.0.null()?)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<B::Obj, Error<B::Err>> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<B::Obj, Error<B::Err>> {
        self.serialize_none()
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<B::Obj, Error<B::Err>> {
        self.serialize_none()
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        v: &'static str,
    ) -> Result<B::Obj, Error<B::Err>> {
        Ok(self.0.name(v)?)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<B::Obj, Error<B::Err>> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<B::Obj, Error<B::Err>> {
        self.tagged(variant, v.serialize(self)?)
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Items<B>, Error<B::Err>> {
        Ok(Items {
            w: self,
            items: Vec::with_capacity(len.unwrap_or(0)),
            variant: None,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Items<B>, Error<B::Err>> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        len: usize,
    ) -> Result<Items<B>, Error<B::Err>> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Items<B>, Error<B::Err>> {
        let mut items = self.serialize_seq(Some(len))?;
        items.variant = Some(variant);
        Ok(items)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Fields<B>, Error<B::Err>> {
        Ok(Fields {
            w: self,
            map: self.0.map()?,
            key: None,
            variant: None,
        })
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Fields<B>, Error<B::Err>> {
        self.serialize_map(None)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Fields<B>, Error<B::Err>> {
        let mut fields = self.serialize_map(None)?;
        fields.variant = Some(variant);
        Ok(fields)
    }
}

pub struct Items<B: Build> {
    w: Writer<B>,
    items: Vec<B::Obj>,
    variant: Option<&'static str>,
}

impl<B: Build> Items<B> {
    fn push<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error<B::Err>> {
        self.items.push(v.serialize(self.w)?);
        Ok(())
    }

    fn finish(self) -> Result<B::Obj, Error<B::Err>> {
        let list = self.w.0.list(self.items)?;
        match self.variant {
            Some(v) => self.w.tagged(v, list),
            None => Ok(list),
        }
    }
}

macro_rules! items {
    ($($trait:ident :: $method:ident),*) => {$(
        impl<B: Build> ser::$trait for Items<B> {
            type Ok = B::Obj;
            type Error = Error<B::Err>;
            fn $method<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error<B::Err>> {
                self.push(v)
            }
            fn end(self) -> Result<B::Obj, Error<B::Err>> {
                self.finish()
            }
        }
    )*};
}
items!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

pub struct Fields<B: Build> {
    w: Writer<B>,
    map: B::Map,
    key: Option<B::Obj>,
    variant: Option<&'static str>,
}

impl<B: Build> Fields<B> {
    fn field<T: Serialize + ?Sized>(
        &mut self,
        name: &'static str,
        v: &T,
    ) -> Result<(), Error<B::Err>> {
        let (k, v) = (self.w.0.name(name)?, v.serialize(self.w)?);
        Ok(self.w.0.insert(&mut self.map, k, v)?)
    }

    fn finish(self) -> Result<B::Obj, Error<B::Err>> {
        let map = self.w.0.done(self.map);
        match self.variant {
            Some(v) => self.w.tagged(v, map),
            None => Ok(map),
        }
    }
}

impl<B: Build> ser::SerializeMap for Fields<B> {
    type Ok = B::Obj;
    type Error = Error<B::Err>;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, k: &T) -> Result<(), Error<B::Err>> {
        self.key = Some(k.serialize(self.w)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error<B::Err>> {
        let k = self.key.take().ok_or_else(|| {
            <Error<B::Err> as ser::Error>::custom("a map value came before its key")
        })?;
        let v = v.serialize(self.w)?;
        Ok(self.w.0.insert(&mut self.map, k, v)?)
    }
    fn end(self) -> Result<B::Obj, Error<B::Err>> {
        self.finish()
    }
}

macro_rules! fields {
    ($($trait:ident),*) => {$(
        impl<B: Build> ser::$trait for Fields<B> {
            type Ok = B::Obj;
            type Error = Error<B::Err>;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                k: &'static str,
                v: &T,
            ) -> Result<(), Error<B::Err>> {
                self.field(k, v)
            }
            fn end(self) -> Result<B::Obj, Error<B::Err>> {
                self.finish()
            }
        }
    )*};
}
fields!(SerializeStruct, SerializeStructVariant);

// ---- native -> Rust -------------------------------------------------------------------------

/// What a native value is, as serde's data model sees it.
pub enum Seen<'a, O: Look> {
    Null,
    Bool(bool),
    I64(i64),
    U64(u64),
    F64(f64),
    Str(Cow<'a, str>),
    Bytes(Cow<'a, [u8]>),
    /// A map's entry count and entries (a key that is not a string is the iterator's error).
    Map(usize, O::Entries),
    Seq(O::Items),
}

/// How a language looks at its objects. An object of a type no core value has is
/// [`Error::Type`], in the language's own words.
pub trait Look: Sized {
    type Err: fmt::Debug + fmt::Display;
    type Entries: Iterator<Item = Result<(Self, Self), Error<Self::Err>>>;
    type Items: Iterator<Item = Result<Self, Error<Self::Err>>>;
    /// What the language calls a map, as an error names it ("dict", "object").
    const MAP: &'static str;
    fn look(&self) -> Result<Seen<'_, Self>, Error<Self::Err>>;
    fn is_null(&self) -> bool;
    /// The object's type, as an error names it.
    fn type_name(&self) -> String;
}

pub struct Reader<O>(pub O);

impl<'de, O: Look> de::Deserializer<'de> for Reader<O> {
    type Error = Error<O::Err>;

    fn is_human_readable(&self) -> bool {
        false
    }

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
        match self.0.look()? {
            Seen::Null => v.visit_unit(),
            Seen::Bool(b) => v.visit_bool(b),
            Seen::I64(i) => v.visit_i64(i),
            Seen::U64(u) => v.visit_u64(u),
            Seen::F64(f) => v.visit_f64(f),
            Seen::Str(s) => v.visit_str(&s),
            Seen::Bytes(Cow::Borrowed(b)) => v.visit_bytes(b),
            Seen::Bytes(Cow::Owned(b)) => v.visit_byte_buf(b),
            Seen::Map(len, entries) => v.visit_map(Entries::<O> {
                len,
                entries,
                value: None,
            }),
            Seen::Seq(items) => v.visit_seq(Elements::<O>(items)),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
        if self.0.is_null() {
            v.visit_none()
        } else {
            v.visit_some(self)
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        v: V,
    ) -> Result<V::Value, Self::Error> {
        v.visit_newtype_struct(self)
    }

    /// A unit variant is its name; any other variant a map with the name as its one key.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Self::Error> {
        match self.0.look()? {
            Seen::Str(s) => v.visit_enum(s.as_ref().into_deserializer()),
            Seen::Map(1, mut entries) => match entries.next() {
                Some(entry) => {
                    let (k, value) = entry?;
                    v.visit_enum(Variant(k, value))
                }
                None => Err(de::Error::custom("a map of one entry had none")),
            },
            _ => Err(Error::Message(format!(
                "expected a variant name or a {} with one key, got {}",
                O::MAP,
                self.0.type_name()
            ))),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

struct Entries<O: Look> {
    entries: O::Entries,
    value: Option<O>,
    len: usize,
}

impl<'de, O: Look> de::MapAccess<'de> for Entries<O> {
    type Error = Error<O::Err>;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        let Some(entry) = self.entries.next() else {
            return Ok(None);
        };
        let (k, value) = entry?;
        self.value = Some(value);
        seed.deserialize(Reader(k)).map(Some)
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, Self::Error> {
        match self.value.take() {
            Some(value) => seed.deserialize(Reader(value)),
            None => Err(de::Error::custom(
                "a map value was asked for before its key",
            )),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.len)
    }
}

struct Elements<O: Look>(O::Items);

impl<'de, O: Look> de::SeqAccess<'de> for Elements<O> {
    type Error = Error<O::Err>;

    fn next_element_seed<T: de::DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Self::Error> {
        match self.0.next() {
            None => Ok(None),
            Some(item) => seed.deserialize(Reader(item?)).map(Some),
        }
    }
}

struct Variant<O>(O, O);

impl<'de, O: Look> de::EnumAccess<'de> for Variant<O> {
    type Error = Error<O::Err>;
    type Variant = Reader<O>;

    fn variant_seed<S: de::DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Reader<O>), Self::Error> {
        Ok((seed.deserialize(Reader(self.0))?, Reader(self.1)))
    }
}

impl<'de, O: Look> de::VariantAccess<'de> for Reader<O> {
    type Error = Error<O::Err>;

    fn unit_variant(self) -> Result<(), Self::Error> {
        Ok(())
    }

    fn newtype_variant_seed<T: de::DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<T::Value, Self::Error> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, v: V) -> Result<V::Value, Self::Error> {
        de::Deserializer::deserialize_seq(self, v)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Self::Error> {
        de::Deserializer::deserialize_map(self, v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shardline_core::protocol::{Endpoint, Envelope, Forward, Message};
    use shardline_core::region::RegionOutput;

    /// A toy object model: enough to see what the converter makes and reads.
    #[derive(Debug, Clone, PartialEq)]
    enum V {
        Null,
        Bool(bool),
        I(i64),
        U(u64),
        F(f64),
        S(String),
        B(Vec<u8>),
        L(Vec<V>),
        M(Vec<(V, V)>),
    }

    #[derive(Clone, Copy)]
    struct Toy;

    impl Build for Toy {
        type Obj = V;
        type Map = Vec<(V, V)>;
        type Err = String;
        fn null(self) -> Made<Self> {
            Ok(V::Null)
        }
        fn bool(self, v: bool) -> Made<Self> {
            Ok(V::Bool(v))
        }
        fn i64(self, v: i64) -> Made<Self> {
            Ok(V::I(v))
        }
        fn u64(self, v: u64) -> Made<Self> {
            Ok(V::U(v))
        }
        fn f64(self, v: f64) -> Made<Self> {
            Ok(V::F(v))
        }
        fn str(self, v: &str) -> Made<Self> {
            Ok(V::S(v.into()))
        }
        fn bytes(self, v: &[u8]) -> Made<Self> {
            Ok(V::B(v.into()))
        }
        fn name(self, v: &'static str) -> Made<Self> {
            Ok(V::S(v.into()))
        }
        fn list(self, items: Vec<V>) -> Made<Self> {
            Ok(V::L(items))
        }
        fn map(self) -> Result<Self::Map, String> {
            Ok(Vec::new())
        }
        fn insert(self, map: &mut Self::Map, k: V, v: V) -> Result<(), String> {
            map.push((k, v));
            Ok(())
        }
        fn done(self, map: Self::Map) -> V {
            V::M(map)
        }
    }

    impl Look for V {
        type Err = String;
        type Entries = std::vec::IntoIter<Result<(V, V), Error<String>>>;
        type Items = std::vec::IntoIter<Result<V, Error<String>>>;
        const MAP: &'static str = "map";
        fn look(&self) -> Result<Seen<'_, Self>, Error<String>> {
            Ok(match self {
                V::Null => Seen::Null,
                V::Bool(b) => Seen::Bool(*b),
                V::I(i) => Seen::I64(*i),
                V::U(u) => Seen::U64(*u),
                V::F(f) => Seen::F64(*f),
                V::S(s) => Seen::Str(s.as_str().into()),
                V::B(b) => Seen::Bytes(b.as_slice().into()),
                V::L(l) => Seen::Seq(l.iter().cloned().map(Ok).collect::<Vec<_>>().into_iter()),
                V::M(m) => Seen::Map(
                    m.len(),
                    m.iter().cloned().map(Ok).collect::<Vec<_>>().into_iter(),
                ),
            })
        }
        fn is_null(&self) -> bool {
            *self == V::Null
        }
        fn type_name(&self) -> String {
            format!("{self:?}")
        }
    }

    fn get<'a>(v: &'a V, key: &str) -> &'a V {
        match v {
            V::M(m) => &m.iter().find(|(k, _)| *k == V::S(key.into())).unwrap().1,
            other => panic!("not a map: {other:?}"),
        }
    }

    #[test]
    fn payloads_are_bytes_and_values_read_back_as_written() {
        let out = RegionOutput::Deliver {
            shard: "1".into(),
            entity: "aGk=".into(),
            payload: b"hi".to_vec(),
        };
        let v = write(Toy, &out).unwrap();
        assert_eq!(get(&v, "payload"), &V::B(b"hi".to_vec()));
        assert_eq!(get(&v, "entity"), &V::S("aGk=".into()));
        assert_eq!(get(&v, "type"), &V::S("deliver".into()));
        assert_eq!(read::<_, RegionOutput>(v).unwrap(), out);

        let env = Envelope {
            from: Endpoint::Region("r1".into()),
            to: Endpoint::Coordinator,
            message: Message::Forward(Forward {
                shard: "7".into(),
                entity: "e".into(),
                payload: vec![0, 255],
            }),
        };
        let v = write(Toy, &env).unwrap();
        assert_eq!(get(&v, "to"), &V::S("coordinator".into()));
        assert_eq!(read::<_, Envelope>(v).unwrap(), env);
    }

    #[test]
    fn a_wrong_value_is_an_error_naming_what_was_expected() {
        let bad = V::M(vec![(V::S("command".into()), V::M(vec![]))]);
        let err = read::<_, Message>(bad).unwrap_err().to_string();
        assert_eq!(err, "missing field `type`");
        let err = read::<_, Endpoint>(V::I(3)).unwrap_err().to_string();
        assert_eq!(
            err,
            "expected a variant name or a map with one key, got I(3)"
        );
    }

    #[test]
    fn wide_integers_fit_or_fail() {
        assert_eq!(write(Toy, &5u128).unwrap(), V::I(5));
        assert_eq!(write(Toy, &u128::from(u64::MAX)).unwrap(), V::U(u64::MAX));
        assert!(matches!(write(Toy, &u128::MAX), Err(Error::Serialize(_))));
    }
}
