//! A2A 0.3 JSON, for the pre-1.0 method aliases.
//!
//! 0.3 differs from 1.0 in shape, not in meaning: every object has a `kind`, enums are
//! lowercase (`user`, `input-required`), file parts nest under `file`, results are not wrapped
//! (`message/send` returns the bare Task or Message), status events carry `final`, and
//! `configuration.blocking` is the inverse of `returnImmediately`, and a push config nests
//! under `pushNotificationConfig` beside its `taskId`, with a list of auth `schemes` where 1.0
//! has one `scheme`. These functions convert
//! requests to 1.0 on the way in and results to 0.3 on the way out, so the handlers only ever
//! see 1.0.
//!
//! Cards are the one place both shapes travel together: [`card_with_v03`] adds 0.3's fields
//! to a 1.0 card without changing any 1.0 one, so the same card reads in either version.

use serde_json::{Map, Value, json};

use crate::Method;

fn role_to_v1(v: &mut Value) {
    if let Some(r) = v.get("role").and_then(Value::as_str) {
        let mapped = match r {
            "user" => "ROLE_USER",
            "agent" => "ROLE_AGENT",
            other => other,
        };
        v["role"] = json!(mapped);
    }
}

fn part_to_v1(p: &Value) -> Value {
    let mut out = Map::new();
    match p.get("kind").and_then(Value::as_str) {
        Some("file") => {
            let f = p.get("file").cloned().unwrap_or_default();
            if let Some(b) = f.get("bytes") {
                out.insert("raw".into(), b.clone());
            }
            if let Some(u) = f.get("uri") {
                out.insert("url".into(), u.clone());
            }
            if let Some(n) = f.get("name") {
                out.insert("filename".into(), n.clone());
            }
            if let Some(m) = f.get("mimeType") {
                out.insert("mediaType".into(), m.clone());
            }
        }
        Some("data") => {
            out.insert("data".into(), p.get("data").cloned().unwrap_or_default());
        }
        _ => {
            if let Some(t) = p.get("text") {
                out.insert("text".into(), t.clone());
            }
        }
    }
    if let Some(m) = p.get("metadata") {
        out.insert("metadata".into(), m.clone());
    }
    Value::Object(out)
}

fn message_to_v1(m: &mut Value) {
    role_to_v1(m);
    if let Some(obj) = m.as_object_mut() {
        obj.remove("kind");
    }
    if let Some(parts) = m.get("parts").and_then(Value::as_array) {
        let parts: Vec<Value> = parts.iter().map(part_to_v1).collect();
        m["parts"] = Value::Array(parts);
    }
}

/// Converts 0.3 `message/send` / `message/stream` params to a 1.0 `SendMessageRequest`.
pub fn send_params_to_v1(params: &mut Value) {
    if let Some(m) = params.get_mut("message") {
        message_to_v1(m);
    }
    if let Some(cfg) = params
        .get_mut("configuration")
        .and_then(Value::as_object_mut)
    {
        if let Some(blocking) = cfg.remove("blocking").and_then(|b| b.as_bool()) {
            cfg.insert("returnImmediately".into(), json!(!blocking));
        }
        if let Some(mut p) = cfg.remove("pushNotificationConfig") {
            auth_to_v1(&mut p);
            cfg.insert("taskPushNotificationConfig".into(), p);
        }
    }
}

/// 0.3 `authentication: {schemes: [..], credentials}` as 1.0's `{scheme, credentials}`. 1.0
/// sends one scheme, so the first one listed is used (an empty list leaves `scheme` absent,
/// and the config is refused naming `authentication.scheme`).
fn auth_to_v1(config: &mut Value) {
    let Some(auth) = config
        .get_mut("authentication")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    if let Some(schemes) = auth.remove("schemes")
        && !auth.contains_key("scheme")
        && let Some(first) = schemes.as_array().and_then(|l| l.first())
    {
        auth.insert("scheme".into(), first.clone());
    }
}

/// Converts 0.3 `tasks/pushNotificationConfig/*` params to the 1.0 request: `set` sends
/// `{taskId, pushNotificationConfig: {id, url, token, authentication}}` (flattened in 1.0);
/// `get` and `delete` name the task `id` and the config `pushNotificationConfigId` (1.0:
/// `taskId` and `id`); `list` names the task `id`. Params that already use the 1.0 names
/// (`taskId` present) are left as they are.
pub fn push_params_to_v1(method: Method, params: &mut Value) {
    let Some(obj) = params.as_object_mut() else {
        return;
    };
    match method {
        Method::CreatePushConfig => {
            if let Some(Value::Object(inner)) = obj.remove("pushNotificationConfig") {
                for (k, v) in inner {
                    obj.entry(k).or_insert(v);
                }
            }
            auth_to_v1(params);
        }
        Method::GetPushConfig | Method::DeletePushConfig | Method::ListPushConfigs => {
            if obj.contains_key("taskId") {
                return;
            }
            if let Some(task) = obj.remove("id") {
                obj.insert("taskId".into(), task);
            }
            if let Some(config) = obj.remove("pushNotificationConfigId") {
                obj.insert("id".into(), config);
            }
        }
        _ => {}
    }
}

/// A 1.0 `TaskPushNotificationConfig` (`{id, taskId, url, token, authentication: {scheme}}`) as
/// 0.3's `{taskId, pushNotificationConfig: {id, url, token, authentication: {schemes: [..]}}}`.
/// Other fields (the delivery health a caller may ask for) stay beside `taskId`.
pub fn push_config_to_v03(mut c: Value) -> Value {
    let Some(obj) = c.as_object_mut() else {
        return c;
    };
    let mut inner = Map::new();
    for key in ["id", "url", "token"] {
        if let Some(v) = obj.remove(key) {
            inner.insert(key.into(), v);
        }
    }
    if let Some(mut auth) = obj.remove("authentication") {
        if let Some(a) = auth.as_object_mut()
            && let Some(scheme) = a.remove("scheme")
        {
            a.insert("schemes".into(), json!([scheme]));
        }
        inner.insert("authentication".into(), auth);
    }
    let mut out = Map::new();
    out.insert("taskId".into(), obj.remove("taskId").unwrap_or(Value::Null));
    out.insert("pushNotificationConfig".into(), Value::Object(inner));
    out.extend(std::mem::take(obj));
    Value::Object(out)
}

/// A push-config method's 1.0 result as 0.3: a config is reshaped, a list
/// (`{configs, nextPageToken}`) is the bare array of configs (0.3 has no pages; one page holds
/// every config a task may have), `delete`'s `null` stays `null`.
pub fn push_result_to_v03(method: Method, result: Value) -> Value {
    match method {
        Method::CreatePushConfig | Method::GetPushConfig => push_config_to_v03(result),
        Method::ListPushConfigs => match result {
            Value::Object(mut o) => match o.remove("configs") {
                Some(Value::Array(list)) => {
                    Value::Array(list.into_iter().map(push_config_to_v03).collect())
                }
                _ => Value::Array(Vec::new()),
            },
            other => other,
        },
        _ => result,
    }
}

/// The 0.3 name of a 1.0 task state.
pub fn state_to_v03(state: &str) -> &'static str {
    match state {
        "TASK_STATE_SUBMITTED" => "submitted",
        "TASK_STATE_WORKING" => "working",
        "TASK_STATE_COMPLETED" => "completed",
        "TASK_STATE_FAILED" => "failed",
        "TASK_STATE_CANCELED" => "canceled",
        "TASK_STATE_INPUT_REQUIRED" => "input-required",
        "TASK_STATE_REJECTED" => "rejected",
        "TASK_STATE_AUTH_REQUIRED" => "auth-required",
        _ => "unknown",
    }
}

fn part_to_v03(p: &Value) -> Value {
    let mut out = Map::new();
    if let Some(t) = p.get("text") {
        out.insert("kind".into(), json!("text"));
        out.insert("text".into(), t.clone());
    } else if let Some(d) = p.get("data") {
        out.insert("kind".into(), json!("data"));
        out.insert("data".into(), d.clone());
    } else {
        let mut file = Map::new();
        if let Some(b) = p.get("raw") {
            file.insert("bytes".into(), b.clone());
        }
        if let Some(u) = p.get("url") {
            file.insert("uri".into(), u.clone());
        }
        if let Some(n) = p.get("filename") {
            file.insert("name".into(), n.clone());
        }
        if let Some(m) = p.get("mediaType") {
            file.insert("mimeType".into(), m.clone());
        }
        out.insert("kind".into(), json!("file"));
        out.insert("file".into(), Value::Object(file));
    }
    if let Some(m) = p.get("metadata") {
        out.insert("metadata".into(), m.clone());
    }
    Value::Object(out)
}

fn parts_to_v03(v: &mut Value) {
    if let Some(parts) = v.get("parts").and_then(Value::as_array) {
        let parts: Vec<Value> = parts.iter().map(part_to_v03).collect();
        v["parts"] = Value::Array(parts);
    }
}

/// A 1.0 Message as 0.3.
pub fn message_to_v03(mut m: Value) -> Value {
    if let Some(r) = m.get("role").and_then(Value::as_str) {
        let r = if r == "ROLE_AGENT" { "agent" } else { "user" };
        m["role"] = json!(r);
    }
    parts_to_v03(&mut m);
    m["kind"] = json!("message");
    m
}

fn status_to_v03(s: &mut Value) {
    if let Some(st) = s.get("state").and_then(Value::as_str) {
        s["state"] = json!(state_to_v03(st));
    }
    if let Some(m) = s.get_mut("message") {
        *m = message_to_v03(m.take());
    }
}

/// A 1.0 Task as 0.3.
pub fn task_to_v03(mut t: Value) -> Value {
    if let Some(s) = t.get_mut("status") {
        status_to_v03(s);
    }
    if let Some(h) = t.get_mut("history").and_then(Value::as_array_mut) {
        for m in h.iter_mut() {
            *m = message_to_v03(m.take());
        }
    }
    if let Some(a) = t.get_mut("artifacts").and_then(Value::as_array_mut) {
        for art in a.iter_mut() {
            parts_to_v03(art);
        }
    }
    t["kind"] = json!("task");
    t
}

/// A 1.0 `SendMessageResponse` / `StreamResponse` (`{"task":…}`, `{"message":…}`,
/// `{"statusUpdate":…}`, `{"artifactUpdate":…}`) as the bare 0.3 result.
pub fn result_to_v03(mut r: Value) -> Value {
    let Some(obj) = r.as_object_mut() else {
        return r;
    };
    if let Some(t) = obj.remove("task") {
        return task_to_v03(t);
    }
    if let Some(m) = obj.remove("message") {
        return message_to_v03(m);
    }
    if let Some(mut u) = obj.remove("statusUpdate") {
        let state = u["status"]["state"].as_str().unwrap_or("").to_string();
        // Sextant's streams stay open while a task waits for input or a decision, so only a
        // terminal state is the final event.
        let final_ = matches!(
            state.as_str(),
            "TASK_STATE_COMPLETED"
                | "TASK_STATE_FAILED"
                | "TASK_STATE_CANCELED"
                | "TASK_STATE_REJECTED"
        );
        if let Some(s) = u.get_mut("status") {
            status_to_v03(s);
        }
        u["kind"] = json!("status-update");
        u["final"] = json!(final_);
        return u;
    }
    if let Some(mut a) = obj.remove("artifactUpdate") {
        if let Some(art) = a.get_mut("artifact") {
            parts_to_v03(art);
        }
        a["kind"] = json!("artifact-update");
        return a;
    }
    r
}

/// The `protocolVersion` a 0.3 card states (0.3's own default for the field).
pub const V03_PROTOCOL_VERSION: &str = "0.3.0";

/// A 1.0 Agent Card with the 0.3 fields added beside its own, for a card request that is a
/// 0.3 one (`crate::version::wants_v03_card`): what the official Python SDK serves to every
/// caller (its `agent_card_to_dict` merges the 0.3 card into the 1.0 one). Nothing of the 1.0
/// card changes or goes, so a 1.0 reader that fetched without `A2A-Version` still finds all of
/// it (protobuf-JSON readers skip the unknown keys, the Python SDK's reader maps the 0.3 ones
/// back), and a 0.3 reader finds what it requires:
///
/// - `url` and `preferredTransport` of the first 0.3 interface in `supportedInterfaces` (the
///   0.3 method aliases), `protocolVersion` [`V03_PROTOCOL_VERSION`], and the other 0.3
///   interfaces as `additionalInterfaces` (`{url, transport}`);
/// - `supportsAuthenticatedExtendedCard` when `capabilities.extendedAgentCard` is true;
/// - each security scheme keeps its 1.0 member (`httpAuthSecurityScheme`, ...) and gains the
///   0.3 fields beside it: `type` (`http`, `apiKey`, `oauth2`, `openIdConnect`, `mutualTLS`)
///   and the member's own fields (an API key's `location` as `in`). A 0.3 reader of the plain
///   1.0 shape would take a bearer scheme for mutual TLS (every field of that one is optional);
/// - `securityRequirements` (card and skills) as 0.3's `security` (`[{name: [scopes]}]`).
///
/// A card without a 0.3 interface is returned as it is: it offers 0.3 clients nothing.
pub fn card_with_v03(card: &Value) -> Value {
    let mut out = card.clone();
    let Some(obj) = out.as_object_mut() else {
        return out;
    };
    let v03: Vec<&Value> = card
        .get("supportedInterfaces")
        .and_then(Value::as_array)
        .map(|l| {
            l.iter()
                .filter(|i| {
                    i.get("protocolVersion")
                        .and_then(Value::as_str)
                        .is_some_and(crate::version::is_v03)
                })
                .collect()
        })
        .unwrap_or_default();
    let Some((primary, others)) = v03.split_first() else {
        return out;
    };
    let mut add = |key: &str, value: Value| {
        if !value.is_null() {
            obj.entry(key).or_insert(value);
        }
    };
    add("url", primary.get("url").cloned().unwrap_or_default());
    add(
        "preferredTransport",
        primary.get("protocolBinding").cloned().unwrap_or_default(),
    );
    add("protocolVersion", json!(V03_PROTOCOL_VERSION));
    if !others.is_empty() {
        let list: Vec<Value> = others
            .iter()
            .map(|i| json!({ "url": i["url"], "transport": i["protocolBinding"] }))
            .collect();
        add("additionalInterfaces", Value::Array(list));
    }
    if card["capabilities"]["extendedAgentCard"] == json!(true) {
        add("supportsAuthenticatedExtendedCard", json!(true));
    }
    if let Some(reqs) = card.get("securityRequirements") {
        add("security", security_to_v03(reqs));
    }
    if let Some(schemes) = obj
        .get_mut("securitySchemes")
        .and_then(Value::as_object_mut)
    {
        for scheme in schemes.values_mut() {
            scheme_add_v03(scheme);
        }
    }
    if let Some(skills) = obj.get_mut("skills").and_then(Value::as_array_mut) {
        for skill in skills {
            if let Some(reqs) = skill.get("securityRequirements").map(security_to_v03)
                && let Some(s) = skill.as_object_mut()
            {
                s.entry("security").or_insert(reqs);
            }
        }
    }
    out
}

/// 1.0 `[{schemes: {name: {list: [scopes]}}}]` as 0.3 `[{name: [scopes]}]`.
fn security_to_v03(reqs: &Value) -> Value {
    let list = reqs.as_array().map(Vec::as_slice).unwrap_or_default();
    Value::Array(
        list.iter()
            .map(|r| {
                let mut out = Map::new();
                if let Some(schemes) = r.get("schemes").and_then(Value::as_object) {
                    for (name, scopes) in schemes {
                        let scopes = scopes.get("list").cloned().unwrap_or_else(|| json!([]));
                        out.insert(name.clone(), scopes);
                    }
                }
                Value::Object(out)
            })
            .collect(),
    )
}

/// Adds the 0.3 fields of a 1.0 security scheme (`{httpAuthSecurityScheme: {..}}`) beside it.
fn scheme_add_v03(scheme: &mut Value) {
    const TYPES: &[(&str, &str)] = &[
        ("httpAuthSecurityScheme", "http"),
        ("apiKeySecurityScheme", "apiKey"),
        ("oauth2SecurityScheme", "oauth2"),
        ("openIdConnectSecurityScheme", "openIdConnect"),
        ("mtlsSecurityScheme", "mutualTLS"),
    ];
    let Some(obj) = scheme.as_object_mut() else {
        return;
    };
    let Some((inner, kind)) = TYPES
        .iter()
        .find_map(|(member, kind)| obj.get(*member).map(|v| (v.clone(), *kind)))
    else {
        return;
    };
    obj.entry("type").or_insert(json!(kind));
    for (k, v) in inner.as_object().into_iter().flatten() {
        let k = if kind == "apiKey" && k == "location" {
            "in"
        } else {
            k.as_str()
        };
        obj.entry(k).or_insert(v.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v03_requests_become_v1() {
        let mut p = json!({
            "message": {"kind": "message", "messageId": "m", "role": "user",
                        "parts": [{"kind": "text", "text": "hi"}]},
            "configuration": {"blocking": false}
        });
        send_params_to_v1(&mut p);
        assert_eq!(
            p,
            json!({
                "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
                "configuration": {"returnImmediately": true}
            })
        );
    }

    #[test]
    fn v03_push_configs_convert_both_ways() {
        let mut set = json!({ "taskId": "t", "pushNotificationConfig": {
            "id": "c", "url": "https://h/w", "token": "tok",
            "authentication": { "schemes": ["Bearer", "Basic"], "credentials": "x" } } });
        push_params_to_v1(Method::CreatePushConfig, &mut set);
        assert_eq!(
            set,
            json!({ "taskId": "t", "id": "c", "url": "https://h/w", "token": "tok",
                    "authentication": { "scheme": "Bearer", "credentials": "x" } })
        );
        let mut get = json!({ "id": "t", "pushNotificationConfigId": "c", "metadata": {} });
        push_params_to_v1(Method::GetPushConfig, &mut get);
        assert_eq!(get, json!({ "taskId": "t", "id": "c", "metadata": {} }));
        let mut list = json!({ "id": "t" });
        push_params_to_v1(Method::ListPushConfigs, &mut list);
        assert_eq!(list, json!({ "taskId": "t" }));

        let v1 = json!({ "id": "c", "taskId": "t", "url": "https://h/w", "token": "tok",
                         "authentication": { "scheme": "Bearer" } });
        let v03 = json!({ "taskId": "t", "pushNotificationConfig": { "id": "c",
            "url": "https://h/w", "token": "tok", "authentication": { "schemes": ["Bearer"] } } });
        assert_eq!(push_result_to_v03(Method::GetPushConfig, v1.clone()), v03);
        assert_eq!(
            push_result_to_v03(
                Method::ListPushConfigs,
                json!({ "configs": [v1], "nextPageToken": "n" })
            ),
            json!([v03])
        );
        assert_eq!(
            push_result_to_v03(Method::DeletePushConfig, Value::Null),
            Value::Null
        );

        let mut send = json!({ "configuration": { "pushNotificationConfig": {
            "url": "https://h/w", "authentication": { "schemes": ["Bearer"] } } } });
        send_params_to_v1(&mut send);
        assert_eq!(
            send["configuration"]["taskPushNotificationConfig"]["authentication"],
            json!({ "scheme": "Bearer" })
        );
    }

    #[test]
    fn v1_results_become_v03() {
        let t = result_to_v03(json!({"task": {
            "id": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_INPUT_REQUIRED"},
            "history": [{"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}],
            "artifacts": [{"artifactId": "a", "parts": [{"data": {"k": 1}}, {"url": "u", "filename": "f"}]}]
        }}));
        assert_eq!(t["kind"], "task");
        assert_eq!(t["status"]["state"], "input-required");
        assert_eq!(t["history"][0]["role"], "user");
        assert_eq!(
            t["history"][0]["parts"][0],
            json!({"kind": "text", "text": "hi"})
        );
        assert_eq!(
            t["artifacts"][0]["parts"][1],
            json!({"kind": "file", "file": {"uri": "u", "name": "f"}})
        );
        let u = result_to_v03(json!({"statusUpdate": {"taskId": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_COMPLETED"}}}));
        assert_eq!(u["kind"], "status-update");
        assert_eq!(u["final"], true);
        assert_eq!(u["status"]["state"], "completed");
    }

    #[test]
    fn a_card_gains_the_0_3_fields_and_keeps_every_1_0_one() {
        let v1 = json!({
            "name": "n",
            "supportedInterfaces": [
                { "url": "http://h/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0" },
                { "url": "http://h/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "0.3" },
                { "url": "http://h/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "0.3" },
            ],
            "capabilities": { "streaming": true, "extendedAgentCard": true },
            "securitySchemes": {
                "bearer": { "httpAuthSecurityScheme": { "scheme": "Bearer", "description": "d" } },
                "key": { "apiKeySecurityScheme": { "location": "header", "name": "X-Key" } },
            },
            "securityRequirements": [{ "schemes": { "bearer": { "list": [] } } }],
            "skills": [{ "id": "s", "securityRequirements": [
                { "schemes": { "key": { "list": ["read"] } } }] }],
        });
        let both = card_with_v03(&v1);
        assert_eq!(both["url"], "http://h/a2a");
        assert_eq!(both["preferredTransport"], "JSONRPC");
        assert_eq!(both["protocolVersion"], "0.3.0");
        assert_eq!(
            both["additionalInterfaces"],
            json!([{ "url": "http://h/rest", "transport": "HTTP+JSON" }])
        );
        assert_eq!(both["supportsAuthenticatedExtendedCard"], true);
        assert_eq!(
            both["securitySchemes"]["bearer"],
            json!({ "httpAuthSecurityScheme": { "scheme": "Bearer", "description": "d" },
                    "type": "http", "scheme": "Bearer", "description": "d" })
        );
        assert_eq!(
            both["securitySchemes"]["key"],
            json!({ "apiKeySecurityScheme": { "location": "header", "name": "X-Key" },
                    "type": "apiKey", "in": "header", "name": "X-Key" })
        );
        assert_eq!(both["security"], json!([{ "bearer": [] }]));
        assert_eq!(both["skills"][0]["security"], json!([{ "key": ["read"] }]));
        // Every 1.0 field is still there, unchanged.
        let mut back = both.clone();
        let o = back.as_object_mut().unwrap();
        for k in [
            "url",
            "preferredTransport",
            "protocolVersion",
            "additionalInterfaces",
            "supportsAuthenticatedExtendedCard",
            "security",
        ] {
            o.remove(k);
        }
        for s in o["securitySchemes"].as_object_mut().unwrap().values_mut() {
            let s = s.as_object_mut().unwrap();
            s.retain(|k, _| k.ends_with("SecurityScheme"));
        }
        o["skills"][0].as_object_mut().unwrap().remove("security");
        assert_eq!(back, v1);
        // The proto defines none of the added fields, so a signature covers the same bytes in
        // either card (the 1.0 card's signatures verify on the 0.3-readable one, and back).
        for r in crate::signing::Reading::ALL {
            assert_eq!(
                crate::signing::canonical::payload(&both, r).unwrap(),
                crate::signing::canonical::payload(&v1, r).unwrap(),
                "{r:?}"
            );
        }

        // Without a 0.3 interface the card is left alone; a false extendedAgentCard adds nothing.
        let only_v1 = json!({ "supportedInterfaces": [
            { "url": "u", "protocolBinding": "JSONRPC", "protocolVersion": "1.0" }] });
        assert_eq!(card_with_v03(&only_v1), only_v1);
        let plain = card_with_v03(&json!({
            "supportedInterfaces": [{ "url": "u", "protocolBinding": "JSONRPC", "protocolVersion": "0.3" }],
            "capabilities": { "extendedAgentCard": false } }));
        assert!(plain.get("supportsAuthenticatedExtendedCard").is_none());
        assert!(plain.get("additionalInterfaces").is_none());
    }
}
