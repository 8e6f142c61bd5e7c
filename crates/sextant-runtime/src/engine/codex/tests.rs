//! The codex engine against a fake app-server (`tests/fixtures/fake-codex-app-server.py`),
//! through the runtime: admit a message, wait for the approval, answer as the person, check
//! the outcome and the exact decision the fake received (it echoes `decision=<JSON>`).

use std::collections::HashMap;
use std::time::Duration;

use serde_json::json;
use sextant_core::a2a::{Message, Part, Role, TaskState};
use sextant_core::projection::{TaskFold, message_text};
use sextant_core::{AgentSpec, EngineSpec, Principal};
use sextant_journal::{Admitted, TaskRow};

use super::approval::*;
use super::connection::*;
use super::*;
use crate::interactions::{AnswerError, AnswerRequest};
use crate::test_support::TestRuntime;
use crate::{Input, Runtime};

fn fake_script() -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/fake-codex-app-server.py")
        .display()
        .to_string()
}

fn codex_agent(approval_timeout_secs: u64, timeout_secs: u64) -> AgentSpec {
    AgentSpec {
        id: "codex".into(),
        name: "Fake Codex".into(),
        description: "test".into(),
        skills: vec![],
        engine: EngineSpec::Codex {
            binary: "python3".into(),
            args: vec![fake_script()],
            working_dir: None,
            codex_home: None,
            model: Some("fake-model".into()),
            approval_policy: Some("on-request".into()),
            sandbox: None,
            approval_timeout_secs,
            timeout_secs,
        },
        session_link: true,
        dedupe_message_ids: true,
        access: Default::default(),
        public_card: Default::default(),
        features: Default::default(),
    }
}

async fn runtime_with(dir: &tempfile::TempDir, agent: AgentSpec, idle: Duration) -> Runtime {
    TestRuntime::in_dir(dir.path())
        .agents(vec![agent])
        .idle_worker(idle)
        .start()
        .await
}

async fn runtime(dir: &tempfile::TempDir) -> Runtime {
    runtime_with(dir, codex_agent(3600, 30), Duration::from_secs(60)).await
}

fn input(id: &str, text: &str, context: Option<&str>) -> Input {
    let mut m = Message::new(Role::User, vec![Part::text(text)]);
    m.message_id = id.into();
    m.context_id = context.map(String::from);
    Input {
        principal: Principal::person(),
        agent_id: "codex".into(),
        message: m,
        origin: sextant_core::Origin::A2a,
        grant: None,
    }
}

async fn settled(rt: &Runtime, task: &TaskRow, after: i64) -> TaskFold {
    tokio::time::timeout(Duration::from_secs(20), rt.wait_settled(task, after))
        .await
        .expect("task settled in time")
        .unwrap()
}

async fn settle(rt: &Runtime, a: &Admitted) -> TaskFold {
    settled(rt, a.task(), a.task().last_seq).await
}

/// Waits for the approval; returns the pending interaction and the seq the task's view had
/// then (wait for what follows the answer from there: the task row an answer returns may
/// already include the engine's next state).
async fn pending(rt: &Runtime, a: &Admitted) -> (sextant_core::Interaction, i64) {
    let f = settle(rt, a).await;
    assert_eq!(
        f.state,
        TaskState::AuthRequired,
        "{:?} {}",
        f.status_message,
        output(&f)
    );
    let i = f
        .pending_interaction()
        .cloned()
        .expect("a pending interaction");
    (i, f.last_seq)
}

fn answer(task: &str, interaction: &str, option: &str) -> AnswerRequest {
    AnswerRequest {
        principal: Principal::person(),
        task_id: task.into(),
        interaction_id: interaction.into(),
        option: option.into(),
        reason: None,
        values: Default::default(),
        message_id: format!("answer-{interaction}-{option}"),
        digest: None,
    }
}

/// Answers as the person and waits for the task's next settled state.
async fn answered(
    rt: &Runtime,
    a: &Admitted,
    (i, waiting_seq): &(sextant_core::Interaction, i64),
    option: &str,
) -> TaskFold {
    let row = rt
        .answer(answer(&a.task().task_id, &i.interaction_id, option))
        .await
        .unwrap();
    settled(rt, &row, *waiting_seq).await
}

fn output(f: &TaskFold) -> String {
    f.artifacts
        .iter()
        .flat_map(|a| a.parts.iter())
        .filter_map(|p| p.as_text())
        .collect()
}

fn status(f: &TaskFold) -> String {
    f.status_message
        .as_ref()
        .map(message_text)
        .unwrap_or_default()
}

#[tokio::test]
async fn accept_runs_and_sends_exactly_accept() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir).await;
    let a = rt.admit(input("m1", "run ls -la", None)).await.unwrap();
    let w = pending(&rt, &a).await;
    let i = &w.0;
    assert_eq!(
        i.option_ids(),
        vec!["accept", "acceptForSession", "decline", "cancel"]
    );
    let labels: Vec<&str> = i.options.iter().map(|o| o.label.as_str()).collect();
    assert_eq!(labels[0], "Yes, proceed");
    assert!(
        labels[1].contains("don't ask again for this command"),
        "{labels:?}"
    );
    assert_eq!(i.command.as_deref(), Some("ls -la"));
    assert_eq!(i.title, "Run this command?");
    assert_eq!(i.default_option, "decline");
    assert!(i.expires_at.is_some());
    let description = i.description.clone().unwrap_or_default();
    assert!(
        description.contains("the fake wants to run it"),
        "{description}"
    );
    assert_eq!(i.engine_ref["requestId"], json!(101));
    assert_eq!(
        i.engine_ref["decisions"],
        json!(["accept", "acceptForSession", "decline", "cancel"])
    );
    assert_eq!(rt.pending_interactions().await.unwrap().len(), 1);

    let f = answered(&rt, &a, &w, "accept").await;
    assert_eq!(f.state, TaskState::Completed, "{}", status(&f));
    assert!(
        output(&f).contains(r#"decision="accept"; ran ls -la"#),
        "{}",
        output(&f)
    );
    assert!(rt.pending_interactions().await.unwrap().is_empty());
    // The command's completion is reported as progress.
    assert!(
        f.history
            .iter()
            .any(|m| message_text(m) == "Command `ls -la`: completed, exit code 0")
    );
}

#[tokio::test]
async fn accept_for_session_is_not_asked_again_in_that_session_only() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir).await;
    let a = rt
        .admit(input("m1", "run make test", Some("ctx-1")))
        .await
        .unwrap();
    let w = pending(&rt, &a).await;
    let f = answered(&rt, &a, &w, "acceptForSession").await;
    assert_eq!(f.state, TaskState::Completed, "{}", status(&f));
    assert!(
        output(&f).contains(r#"decision="acceptForSession"; ran make test"#),
        "{}",
        output(&f)
    );

    // Same Session: the same app-server and thread; Codex's session cache answers.
    let b = rt
        .admit(input("m2", "run make test", Some("ctx-1")))
        .await
        .unwrap();
    let f = settle(&rt, &b).await;
    assert_eq!(f.state, TaskState::Completed, "{}", status(&f));
    assert!(f.interactions.is_empty());
    assert!(
        output(&f).contains("ran make test (approved for this session)"),
        "{}",
        output(&f)
    );

    // Another Session: another app-server, asked again.
    let c = rt
        .admit(input("m3", "run make test", Some("ctx-2")))
        .await
        .unwrap();
    let w = pending(&rt, &c).await;
    let f = answered(&rt, &c, &w, "decline").await;
    assert_eq!(f.state, TaskState::Completed);
}

#[tokio::test]
async fn decline_lets_codex_finish_the_turn() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir).await;
    let a = rt
        .admit(input("m1", "run rm -rf build", None))
        .await
        .unwrap();
    let w = pending(&rt, &a).await;
    let f = answered(&rt, &a, &w, "decline").await;
    assert_eq!(f.state, TaskState::Completed, "{}", status(&f));
    assert!(
        output(&f).contains(r#"decision="decline"; declined rm -rf build"#),
        "{}",
        output(&f)
    );
}

#[tokio::test]
async fn cancel_interrupts_the_turn_and_fails_the_task() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir).await;
    let a = rt
        .admit(input("m1", "run git push --force", None))
        .await
        .unwrap();
    let w = pending(&rt, &a).await;
    let f = answered(&rt, &a, &w, "cancel").await;
    assert_eq!(f.state, TaskState::Failed);
    assert!(status(&f).starts_with("Canceled by you"), "{}", status(&f));
    assert!(
        output(&f).contains(r#"decision="cancel"; turn interrupted"#),
        "{}",
        output(&f)
    );

    // The process is still usable for the next turn of the Session.
    let mut next = input("m2", "hello again", None);
    next.message.context_id = Some(a.task().context_id.to_string());
    let f = settle(&rt, &rt.admit(next).await.unwrap()).await;
    assert_eq!(f.state, TaskState::Completed);
    assert_eq!(output(&f), "got: hello again");
}

#[tokio::test]
async fn file_changes_ask_with_the_default_decisions_and_string_request_ids() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir).await;
    let a = rt
        .admit(input("m1", "edit notes/todo.txt", None))
        .await
        .unwrap();
    let w = pending(&rt, &a).await;
    let i = &w.0;
    assert_eq!(i.title, "Apply these file changes?");
    assert_eq!(
        i.option_ids(),
        vec!["accept", "acceptForSession", "decline", "cancel"]
    );
    assert!(
        i.options[1].label.contains("these files"),
        "{:?}",
        i.options
    );
    let description = i.description.clone().unwrap_or_default();
    assert!(
        description.contains("notes/todo.txt (add)") && description.contains("write a note"),
        "{description}"
    );
    assert_eq!(i.command, None);
    assert_eq!(i.engine_ref["requestId"], json!("req-101"));
    // The patch itself is what the card shows and the digest binds, not only the file's name.
    let action = i.action.as_ref().expect("a file change has an action");
    assert_eq!(action.exact["changes"][0]["diff"], json!("+hello\n"));
    assert_eq!(action.exact["changes"][0]["path"], json!("notes/todo.txt"));
    assert!(action.shown.contains("+hello"), "{}", action.shown);

    let f = answered(&rt, &a, &w, "accept").await;
    assert_eq!(f.state, TaskState::Completed, "{}", status(&f));
    assert!(
        output(&f).contains(r#"decision="accept"; wrote notes/todo.txt"#),
        "{}",
        output(&f)
    );
}

#[tokio::test]
async fn a_request_codex_resolves_itself_leaves_the_pending_list() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir).await;
    let flag = dir.path().join("resolve-now");
    let prompt = format!("resolve-when {}", flag.display());
    let a = rt.admit(input("m1", &prompt, None)).await.unwrap();
    let waiting = settle(&rt, &a).await;
    assert_eq!(
        waiting.state,
        TaskState::AuthRequired,
        "{}",
        status(&waiting)
    );
    let i = waiting.pending_interaction().cloned().expect("pending");
    assert_eq!(rt.pending_interactions().await.unwrap().len(), 1);

    // Now the fake resolves the request itself and finishes the turn.
    std::fs::write(&flag, b"").unwrap();
    let f = settled(&rt, a.task(), waiting.last_seq).await;
    assert_eq!(f.state, TaskState::Completed, "{}", status(&f));
    assert!(output(&f).contains("resolved by itself"), "{}", output(&f));
    assert!(rt.pending_interactions().await.unwrap().is_empty());
    let (_, given) = f
        .interactions
        .iter()
        .find(|(x, _)| x.interaction_id == i.interaction_id)
        .unwrap();
    let given = given.as_ref().expect("closed");
    assert_eq!(
        (given.answered_by.as_str(), given.option.as_str()),
        (crate::engine::WITHDRAWN_BY, "decline")
    );
    assert!(!given.expired);

    // The person's late answer is refused, and nothing was sent to Codex for it.
    assert!(matches!(
        rt.answer(answer(&a.task().task_id, &i.interaction_id, "accept"))
            .await,
        Err(AnswerError::Refused(
            sextant_core::interaction::AnswerRefusal::AlreadyAnswered
        ))
    ));
    let mut next = input("m2", "anything late?", None);
    next.message.context_id = Some(a.task().context_id.to_string());
    let f = settle(&rt, &rt.admit(next).await.unwrap()).await;
    assert_eq!(output(&f), "got: anything late?");
}

#[tokio::test]
async fn decisions_that_write_permanent_codex_rules_are_not_offered() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir).await;
    let a = rt
        .admit(input("m1", "amend git status", None))
        .await
        .unwrap();
    let w = pending(&rt, &a).await;
    let i = &w.0;
    // Codex offered `acceptWithExecpolicyAmendment` too: it would add a rule to Codex's rules
    // file that outlives this Session and Agent, so the card does not offer it.
    assert_eq!(i.option_ids(), vec!["accept", "decline", "cancel"]);
    let f = answered(&rt, &a, &w, "accept").await;
    assert_eq!(f.state, TaskState::Completed, "{}", status(&f));
    assert!(
        output(&f).contains(r#"decision="accept"; ran git status"#),
        "{}",
        output(&f)
    );
}

#[tokio::test]
async fn an_unanswered_approval_expires_to_decline() {
    let dir = tempfile::tempdir().unwrap();
    let (rt, recovery) = TestRuntime::in_dir(dir.path())
        .agents(vec![codex_agent(1, 30)])
        .open()
        .await;
    recovery.run().await.unwrap(); // starts the expiry loop
    let a = rt.admit(input("m1", "plain touch x", None)).await.unwrap();
    let waiting = settle(&rt, &a).await;
    assert_eq!(waiting.state, TaskState::AuthRequired);
    // No availableDecisions: the documented defaults.
    let i = waiting.pending_interaction().cloned().unwrap();
    assert_eq!(
        i.option_ids(),
        vec!["accept", "acceptForSession", "decline", "cancel"]
    );
    let f = settled(&rt, a.task(), waiting.last_seq).await;
    assert_eq!(f.state, TaskState::Completed, "{}", status(&f));
    assert!(
        output(&f).contains(r#"decision="decline"; declined touch x"#),
        "{}",
        output(&f)
    );
}

#[tokio::test]
async fn thread_start_carries_the_agent_config() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir).await;
    let f = settle(&rt, &rt.admit(input("m1", "whoami", None)).await.unwrap()).await;
    assert_eq!(f.state, TaskState::Completed, "{}", status(&f));
    let out = output(&f);
    assert!(out.contains(r#""name": "sextant""#), "{out}");
    assert!(
        out.contains(r#""model": "fake-model""#)
            && out.contains(r#""approvalPolicy": "on-request""#),
        "{out}"
    );
    assert!(
        out.contains(&dir.path().join("work").display().to_string()),
        "{out}"
    );
    assert!(!out.contains("sandbox"), "{out}");
}

/// Each Codex Agent runs with its own `CODEX_HOME`, which finds the person's login through a
/// link; an Agent that names a `codex_home` gets exactly that one.
#[tokio::test]
async fn each_agent_has_its_own_codex_home_unless_it_names_one() {
    let dir = tempfile::tempdir().unwrap();
    let person = dir.path().join("person-codex");
    std::fs::create_dir_all(&person).unwrap();
    std::fs::write(person.join("auth.json"), "person-login").unwrap();
    let shared = dir.path().join("shared-codex");
    std::fs::create_dir_all(&shared).unwrap();
    let own = codex_agent(3600, 30);
    let mut other = codex_agent(3600, 30);
    other.id = "codex-b".into();
    let mut named = codex_agent(3600, 30);
    named.id = "codex-shared".into();
    if let EngineSpec::Codex { codex_home, .. } = &mut named.engine {
        *codex_home = Some(shared.clone());
    }
    let rt = TestRuntime::in_dir(dir.path())
        .agents(vec![own, other, named])
        .person_codex_home(&person)
        .start()
        .await;
    let mut homes = Vec::new();
    for (n, agent) in ["codex", "codex-b", "codex-shared"].iter().enumerate() {
        let mut i = input(&format!("m{n}"), "home", None);
        i.agent_id = agent.to_string();
        let f = settle(&rt, &rt.admit(i).await.unwrap()).await;
        assert_eq!(f.state, TaskState::Completed, "{}", status(&f));
        homes.push(output(&f));
    }
    let codex_homes = dir.path().join("work.codex");
    assert_eq!(
        homes[0],
        format!(
            "codex_home={} auth=person-login",
            codex_homes.join("codex").display()
        )
    );
    assert_eq!(
        homes[1],
        format!(
            "codex_home={} auth=person-login",
            codex_homes.join("codex-b").display()
        )
    );
    // Shared on purpose: used as it is, nothing linked into it.
    assert_eq!(
        homes[2],
        format!("codex_home={} auth=none", shared.display())
    );
}

#[tokio::test]
async fn a_crash_fails_the_turn_and_the_next_turn_starts_over_with_the_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir).await;
    let a = rt.admit(input("m1", "hello", Some("ctx"))).await.unwrap();
    assert_eq!(output(&settle(&rt, &a).await), "got: hello");

    let b = rt.admit(input("m2", "die", Some("ctx"))).await.unwrap();
    let f = settle(&rt, &b).await;
    assert_eq!(f.state, TaskState::Failed);
    let why = status(&f);
    assert!(
        why.contains("exited with code 3") && why.contains("crashed on purpose"),
        "{why}"
    );

    let c = rt
        .admit(input("m3", "still there?", Some("ctx")))
        .await
        .unwrap();
    let f = settle(&rt, &c).await;
    assert_eq!(f.state, TaskState::Completed, "{}", status(&f));
    let out = output(&f);
    assert!(
        out.starts_with("got: [Earlier in this conversation"),
        "{out}"
    );
    assert!(
        out.contains("user: hello\nassistant: got: hello\n"),
        "{out}"
    );
    assert!(
        out.ends_with("[End of the earlier conversation.]\n\nstill there?"),
        "{out}"
    );
}

#[tokio::test]
async fn malformed_lines_are_skipped_and_failures_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir).await;
    let f = settle(
        &rt,
        &rt.admit(input("m1", "garbage", Some("ctx"))).await.unwrap(),
    )
    .await;
    assert_eq!(f.state, TaskState::Completed, "{}", status(&f));
    assert_eq!(output(&f), "still here");

    let f = settle(
        &rt,
        &rt.admit(input("m2", "fail", Some("ctx"))).await.unwrap(),
    )
    .await;
    assert_eq!(f.state, TaskState::Failed);
    assert_eq!(status(&f), "Codex failed: quota exceeded");
}

#[tokio::test]
async fn a_turn_that_runs_too_long_is_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime_with(&dir, codex_agent(3600, 1), Duration::from_secs(60)).await;
    let a = rt.admit(input("m1", "slow", Some("ctx"))).await.unwrap();
    let f = settle(&rt, &a).await;
    assert_eq!(f.state, TaskState::Failed);
    assert!(status(&f).contains("longer than 1 s"), "{}", status(&f));
    // Codex acknowledged the interrupt, so the same process serves the next turn.
    let f = settle(
        &rt,
        &rt.admit(input("m2", "ok", Some("ctx"))).await.unwrap(),
    )
    .await;
    assert_eq!(output(&f), "got: ok");
}

#[tokio::test]
async fn a_missing_binary_fails_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let mut agent = codex_agent(3600, 30);
    if let EngineSpec::Codex { binary, .. } = &mut agent.engine {
        *binary = "/nonexistent/codex".into();
    }
    let rt = runtime_with(&dir, agent, Duration::from_secs(60)).await;
    let f = settle(&rt, &rt.admit(input("m1", "hi", None)).await.unwrap()).await;
    assert_eq!(f.state, TaskState::Failed);
    assert!(
        status(&f).contains("cannot start the Codex app-server /nonexistent/codex"),
        "{}",
        status(&f)
    );
}

#[test]
fn lines_are_sorted_into_requests_notifications_and_responses() {
    assert_eq!(
        classify(r#"{"id":7,"method":"item/fileChange/requestApproval","params":{"a":1}}"#),
        Ok(Incoming::Request {
            id: json!(7),
            method: FILE_APPROVAL.into(),
            params: json!({"a": 1})
        })
    );
    assert_eq!(
        classify(r#"{"jsonrpc":"2.0","method":"turn/completed","params":{}}"#),
        Ok(Incoming::Notification {
            method: "turn/completed".into(),
            params: json!({})
        })
    );
    assert_eq!(
        classify(r#"{"id":"a","result":{"thread":{"id":"t"}}}"#),
        Ok(Incoming::Response {
            id: json!("a"),
            result: Ok(json!({"thread": {"id": "t"}}))
        })
    );
    assert_eq!(
        classify(r#"{"id":1,"error":{"code":-32600,"message":"Not initialized"}}"#),
        Ok(Incoming::Response {
            id: json!(1),
            result: Err("Not initialized (code -32600)".into())
        })
    );
    for bad in [
        "",
        "nope",
        "[1]",
        r#"{"id":1}"#,
        r#"{"method":3}"#,
        "{\"id\":1,\"method\":",
    ] {
        assert!(classify(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn options_follow_the_offered_decisions_in_order() {
    let offered = vec![
        json!("accept"),
        json!({"applyNetworkPolicyAmendment": {"network_policy_amendment": {"host": "example.com", "action": "allow"}}}),
        json!({"applyNetworkPolicyAmendment": {"network_policy_amendment": {"host": "evil.test", "action": "deny"}}}),
        json!({"someFutureDecision": {"x": 1}}),
        json!("cancel"),
    ];
    let options = decision_options(ApprovalKind::Command, &offered);
    let ids: Vec<&str> = options.iter().map(|o| o.id.as_str()).collect();
    assert_eq!(
        ids,
        vec![
            "accept",
            "applyNetworkPolicyAmendment",
            "applyNetworkPolicyAmendment-2",
            "someFutureDecision",
            "cancel"
        ]
    );
    assert_eq!(options[1].label, "Yes, and allow example.com in the future");
    assert_eq!(options[2].label, "No, and block evil.test in the future");
    assert_eq!(options[3].label, "Some future decision");
    // Without decline, the safe default is cancel.
    assert_eq!(default_option(&options), "cancel");
    assert_eq!(
        default_option(&decision_options(ApprovalKind::Files, &default_decisions())),
        "decline"
    );
    assert_eq!(
        humanize("acceptWithExecpolicyAmendment"),
        "Accept with execpolicy amendment"
    );
}

#[test]
fn approval_cards_show_the_exact_request_and_bind_it_to_a_digest() {
    let params = json!({
        "threadId": "t", "turnId": "u", "itemId": "i",
        "command": "curl -H 'Authorization: Bearer abcdef' https://x\u{202e}",
        "cwd": "/home/me",
        "reason": "needs API_TOKEN=hunter2",
    });
    let request = ApprovalRequest::new(COMMAND_APPROVAL, &params, &HashMap::new());
    // The person sees exactly what Codex asked (nothing redacted), escaped where invisible.
    assert_eq!(
        request.what(),
        "run `curl -H 'Authorization: Bearer abcdef' https://x\\u{202E}`"
    );
    assert_eq!(request.decisions, default_decisions());
    let action = request.action();
    assert_eq!(action.exact["command"], params["command"]);
    assert_eq!(action.exact["cwd"], "/home/me");
    assert_eq!(action.flags[0].code, "bidi");
    assert_eq!(action.digest, sextant_core::action::digest(&action.exact));
    let other = ApprovalRequest::new(
        COMMAND_APPROVAL,
        &json!({"command": "curl https://x", "cwd": "/home/me"}),
        &HashMap::new(),
    );
    assert_ne!(other.action().digest, action.digest);
}

/// `kind` and `approvalId` of command approvals (codex-cli 0.171): input to a running command
/// is shown as such, a callback with its own id never borrows its item's command line, and
/// both are part of what the digest binds.
#[test]
fn command_approval_kind_and_approval_id_are_shown_and_bound() {
    let items = HashMap::from([("i".to_string(), ItemInfo::Command("bash -i".into()))]);
    let stdin = ApprovalRequest::new(
        COMMAND_APPROVAL,
        &json!({"threadId": "t", "turnId": "u", "itemId": "i", "kind": "writeStdin"}),
        &items,
    );
    assert_eq!(stdin.what(), "send input to the running command `bash -i`");
    assert_eq!(stdin.title(), "Send input to a running command?");
    assert_eq!(stdin.action().exact["requestKind"], "writeStdin");

    let plain = ApprovalRequest::new(
        COMMAND_APPROVAL,
        &json!({"threadId": "t", "turnId": "u", "itemId": "i", "kind": "command"}),
        &items,
    );
    assert_eq!(plain.what(), "run `bash -i`");
    assert_eq!(plain.title(), "Run this command?");
    assert!(plain.action().exact.get("requestKind").is_none());

    // A subcommand's callback without a command line: not shown as the item's command.
    let sub = ApprovalRequest::new(
        COMMAND_APPROVAL,
        &json!({"threadId": "t", "turnId": "u", "itemId": "i", "approvalId": "cb-1"}),
        &items,
    );
    assert_eq!(sub.what(), "run a command");
    let with_command = |id: &str| {
        ApprovalRequest::new(
            COMMAND_APPROVAL,
            &json!({"itemId": "i", "approvalId": id, "command": "rm -rf build"}),
            &items,
        )
        .action()
    };
    assert_eq!(with_command("cb-1").exact["approvalId"], "cb-1");
    assert_ne!(with_command("cb-1").digest, with_command("cb-2").digest);

    // The real app-server's command approvals offer no decline: expiry sends cancel, and the
    // permanent-rule decision is not on the card.
    let real = ApprovalRequest::new(
        COMMAND_APPROVAL,
        &json!({"command": "ls", "availableDecisions": [
            "accept",
            {"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["ls"]}},
            "cancel"
        ]}),
        &items,
    );
    let options = decision_options(ApprovalKind::Command, &real.decisions);
    let ids: Vec<&str> = options.iter().map(|o| o.id.as_str()).collect();
    assert_eq!(ids, vec!["accept", "cancel"]);
    assert_eq!(default_option(&options), "cancel");
}

#[test]
fn history_is_passed_to_a_new_thread() {
    assert_eq!(with_history(&[], "hi"), "hi");
    let mut long = Message::new(Role::Agent, vec![Part::text("é".repeat(3000))]);
    long.message_id = "x".into();
    let out = with_history(
        &[Message::new(Role::User, vec![Part::text("q")]), long],
        "next",
    );
    assert!(out.contains("user: q\nassistant: é"));
    assert!(out.contains(" […]\n"));
    assert!(out.ends_with("next"));
}

#[test]
fn a_request_ends_when_codex_resolves_it_or_its_threads_turn_ends() {
    let note = |method: &str, params: serde_json::Value| Incoming::Notification {
        method: method.into(),
        params,
    };
    let id = json!(101);
    let resolved = note(
        "serverRequest/resolved",
        json!({"threadId": "t", "requestId": 101}),
    );
    assert!(ends_request(&resolved, &id, "t"));
    let other = note(
        "serverRequest/resolved",
        json!({"threadId": "t", "requestId": "101"}),
    );
    assert!(!ends_request(&other, &id, "t"));
    let done = note(
        "turn/completed",
        json!({"threadId": "t", "turn": {"id": "u"}}),
    );
    assert!(ends_request(&done, &id, "t"));
    let sub_agent = note(
        "turn/completed",
        json!({"threadId": "sub", "turn": {"id": "v"}}),
    );
    assert!(!ends_request(&sub_agent, &id, "t"));
    assert!(!ends_request(&note("item/started", json!({})), &id, "t"));
}

/// A Codex task waiting for an approval, then Sextant stopped: the task and its decision,
/// and the seq its view had then.
async fn waiting_at_shutdown(dir: &tempfile::TempDir) -> (TaskRow, sextant_core::Interaction, i64) {
    let rt = runtime(dir).await;
    let a = rt
        .admit(input("m1", "run make deploy", None))
        .await
        .unwrap();
    let (interaction, waiting_seq) = pending(&rt, &a).await;
    rt.shutdown(Duration::from_millis(200)).await;
    (a.task().clone(), interaction, waiting_seq)
}

#[tokio::test]
async fn a_pending_approval_is_closed_at_the_next_start_and_its_task_fails_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let (task, interaction, waiting_seq) = waiting_at_shutdown(&dir).await;
    let (rt, recovery) = TestRuntime::in_dir(dir.path())
        .agents(vec![codex_agent(3600, 30)])
        .open()
        .await;
    recovery.run().await.unwrap();
    let f = settled(&rt, &task, waiting_seq).await;
    assert_eq!(f.state, TaskState::Failed);
    assert!(
        status(&f).contains("Sextant restarted while Codex waited for this decision"),
        "{}",
        status(&f)
    );
    // Nobody is left with a card whose answer could not land.
    assert!(rt.pending_interactions().await.unwrap().is_empty());
    let late = rt
        .answer(answer(&task.task_id, &interaction.interaction_id, "accept"))
        .await;
    assert!(
        matches!(
            late,
            Err(AnswerError::Refused(
                sextant_core::interaction::AnswerRefusal::AlreadyAnswered
                    | sextant_core::interaction::AnswerRefusal::TaskTerminal
            ))
        ),
        "{late:?}"
    );
}

#[tokio::test]
async fn an_answer_that_beats_the_close_fails_its_task_with_the_same_reason() {
    let dir = tempfile::tempdir().unwrap();
    let (task, interaction, waiting_seq) = waiting_at_shutdown(&dir).await;
    // Answered before the start-up close ran (here: before recovery).
    let rt = runtime(&dir).await;
    let row = rt
        .answer(answer(&task.task_id, &interaction.interaction_id, "accept"))
        .await
        .unwrap();
    let f = settled(&rt, &row, waiting_seq).await;
    assert_eq!(f.state, TaskState::Failed);
    assert!(
        status(&f).contains("the Codex app-server that asked is gone"),
        "{}",
        status(&f)
    );
}

#[tokio::test]
async fn canceling_a_running_turn_interrupts_it_and_the_app_server_serves_on() {
    use futures::StreamExt;
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime_with(&dir, codex_agent(3600, 600), Duration::from_secs(60)).await;
    let a = rt.admit(input("m1", "slow", Some("ctx"))).await.unwrap();
    // Wait until the turn has reached the app-server: its first words (the fake then works
    // until it is interrupted). Canceled earlier, nothing of the turn would start at all.
    let events =
        crate::stream::task_events(rt.journal(), a.task(), 0, crate::stream::StopAt::Never);
    futures::pin_mut!(events);
    tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(ev) = events.next().await {
            if matches!(ev.unwrap().body, sextant_core::EventBody::Artifact { .. }) {
                return;
            }
        }
    })
    .await
    .expect("the turn started");
    let request = crate::CancelRequest {
        by: "you".into(),
        reason: None,
    };
    let out = rt.cancel(&a.task().task_id, &request).await.unwrap();
    assert!(matches!(out, crate::CancelOutcome::Canceled(_)), "{out:?}");
    // The interrupt reached Codex: the same process serves the next turn at once (a turn
    // that was not interrupted would hold it for ten minutes).
    let f = settle(
        &rt,
        &rt.admit(input("m2", "ok", Some("ctx"))).await.unwrap(),
    )
    .await;
    assert_eq!(output(&f), "got: ok");
    let task = rt.journal().task(&a.task().task_id).await.unwrap().unwrap();
    assert_eq!(task.state, TaskState::Canceled);
}
