//! Frames between nodes and from clients: a 4-byte big-endian length, then one JSON value.
//! JSON because the core's protocol types already have their documented JSON form, so a
//! capture of the wire reads like the protocol reference.

use std::io::{self, Read, Write};

use serde::{Deserialize, Serialize};
use shardline_core::protocol::{Envelope, Payload};

/// Larger frames are refused: nothing this cluster sends comes near it, so one is corrupt.
const MAX_FRAME: usize = 16 << 20;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "frame", rename_all = "camelCase")]
pub enum Frame {
    /// A protocol message between regions and coordinators.
    Envelope { envelope: Envelope },
    /// A coordinator became active: regions re-register with it.
    CoordinatorChanged,
    /// A message another region could not keep, sent back to the region that forwarded it.
    #[serde(rename_all = "camelCase")]
    Bounce {
        shard: String,
        entity: String,
        #[serde(with = "shardline_core::protocol::payload")]
        payload: Payload,
    },
    /// A client's numbered message for an entity.
    Route { entity: String, message: u64 },
    /// The node's answer to a `Route`.
    Ack {
        message: u64,
        accepted: bool,
        region: String,
    },
}

pub fn write_frame(w: &mut impl Write, frame: &Frame) -> io::Result<()> {
    let body = serde_json::to_vec(frame).map_err(io::Error::other)?;
    let mut buf = Vec::with_capacity(body.len() + 4);
    buf.extend_from_slice(&(body.len() as u32).to_be_bytes());
    buf.extend_from_slice(&body);
    w.write_all(&buf)
}

/// `Ok(None)`: the peer closed the connection between frames.
pub fn read_frame(r: &mut impl Read) -> io::Result<Option<Frame>> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_be_bytes(len) as usize;
    if len > MAX_FRAME {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("frame of {len} bytes is over the {MAX_FRAME}-byte limit"),
        ));
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body)?;
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("bad frame: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_bad_ones_are_refused() {
        let mut buf = Vec::new();
        let f = Frame::Bounce {
            shard: "3".into(),
            entity: "e1".into(),
            payload: b"17".to_vec(),
        };
        write_frame(&mut buf, &f).unwrap();
        write_frame(&mut buf, &Frame::CoordinatorChanged).unwrap();
        let mut r = &buf[..];
        assert!(
            matches!(read_frame(&mut r).unwrap(), Some(Frame::Bounce { payload, .. }) if payload == b"17")
        );
        assert!(matches!(
            read_frame(&mut r).unwrap(),
            Some(Frame::CoordinatorChanged)
        ));
        assert!(read_frame(&mut r).unwrap().is_none());

        let mut bad = 5u32.to_be_bytes().to_vec();
        bad.extend_from_slice(b"{\"x\":");
        let e = read_frame(&mut &bad[..]).unwrap_err();
        assert!(e.to_string().contains("bad frame"), "{e}");
        let huge = (u32::MAX).to_be_bytes();
        let e = read_frame(&mut &huge[..]).unwrap_err();
        assert!(e.to_string().contains("limit"), "{e}");
    }

    /// The Python node (`cluster/python/node.py`) writes and reads these exact forms; its own
    /// test (`cluster/python/test_node.py`) checks the same texts.
    #[test]
    fn frames_have_the_forms_the_python_node_speaks() {
        let forms = [
            (
                Frame::Bounce {
                    shard: "3".into(),
                    entity: "e1".into(),
                    payload: b"17".to_vec(),
                },
                r#"{"frame":"bounce","shard":"3","entity":"e1","payload":"MTc="}"#,
            ),
            (
                Frame::CoordinatorChanged,
                r#"{"frame":"coordinatorChanged"}"#,
            ),
            (
                Frame::Route {
                    entity: "e1".into(),
                    message: 17,
                },
                r#"{"frame":"route","entity":"e1","message":17}"#,
            ),
            (
                Frame::Ack {
                    message: 17,
                    accepted: true,
                    region: "n0-1".into(),
                },
                r#"{"frame":"ack","message":17,"accepted":true,"region":"n0-1"}"#,
            ),
        ];
        for (frame, text) in forms {
            assert_eq!(serde_json::to_string(&frame).unwrap(), text);
            let back: Frame = serde_json::from_str(text).unwrap();
            assert_eq!(serde_json::to_string(&back).unwrap(), text);
        }
        let envelope = r#"{"frame":"envelope","envelope":{"from":{"region":"a-1"},"to":{"region":"b-2"},"message":{"forward":{"shard":"3","entity":"e1","payload":"MTc="}}}}"#;
        let f: Frame = serde_json::from_str(envelope).unwrap();
        assert_eq!(serde_json::to_string(&f).unwrap(), envelope);
    }
}
