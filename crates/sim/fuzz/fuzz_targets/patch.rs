//! Fuzzes body decoding and every patch path of the simulator: no input may panic.
//!
//! Input layout: byte 0 picks the resource type, byte 1 the operation; the rest is split at the
//! first NUL into the stored object and the request body (both arbitrary bytes). The seeds
//! (`scripts/fuzz.sh`) include the hostile bodies of issue #30: a JSON patch whose copies nest
//! 8,192 and 16,384 levels, and bodies one level past Go's nesting limit.

#![no_main]

use k8s_openapi::jiff::Timestamp;
use lab_runner_sim::resources::built_in;
use lab_runner_sim::registry::admission;
use lab_runner_sim::server::{fieldvalidation, patch};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    // As the simulator handles requests: on a stack with room for input nested as deep as the
    // decoders accept (lab_runner_sim::THREAD_STACK_BYTES).
    stacker::grow(lab_runner_sim::THREAD_STACK_BYTES, || one_input(data));
});

fn one_input(data: &[u8]) {
    let [type_byte, op_byte, rest @ ..] = data else { return };
    let types = built_in();
    let rt = &types[usize::from(*type_byte) % types.len()];
    let (stored, body) = match rest.iter().position(|b| *b == 0) {
        Some(at) => (&rest[..at], &rest[at + 1..]),
        None => (&rest[..0], rest),
    };
    let current: Value = serde_json::from_slice(stored).unwrap_or_else(|_| serde_json::json!({}));
    let now = Timestamp::from_second(1_800_000_000).expect("valid time");
    let result = match op_byte % 6 {
        0 => patch::apply_patch(rt, patch::PatchKind::StrategicMerge, &current, body).ok(),
        1 => patch::apply_patch(rt, patch::PatchKind::Merge, &current, body).ok(),
        2 => patch::apply_patch(rt, patch::PatchKind::Json, &current, body).ok(),
        3 => patch::decode_apply_body(body).ok().and_then(|applied| {
            let options = patch::ApplyOptions { field_manager: "fuzz".into(), force: op_byte & 0x80 != 0 };
            let existing = (!stored.is_empty()).then_some(&current);
            patch::server_side_apply_at(rt, existing, &applied, &options, now).ok()
        }),
        4 => fieldvalidation::decode_body(rt, body, fieldvalidation::Mode::Warn).ok().map(|(v, _)| v),
        _ => serde_json::from_slice::<Value>(body).ok().and_then(|mut new| {
            patch::record_update(rt, "fuzz", None, Some(&current), &mut new, now).ok().map(|()| new)
        }),
    };
    if let Some(mut object) = result {
        let _ = fieldvalidation::check(rt, &object, fieldvalidation::Mode::Strict);
        fieldvalidation::strip_unknown(rt, &mut object);
        admission::apply_defaults(rt, &mut object);
        let _ = admission::validate(rt, &object, Some(&current));
    }
}
