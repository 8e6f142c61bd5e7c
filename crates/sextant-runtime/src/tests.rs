use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use sextant_core::a2a::{Message, Part, Role, TaskState};
use sextant_core::projection::message_text;
use sextant_core::{AgentSpec, EngineSpec, EventBody, Principal, SystemClock};
use sextant_journal::{Admitted, Journal};

use super::*;

fn exec_agent(id: &str, script: &str) -> AgentSpec {
    AgentSpec {
        id: id.into(),
        name: id.into(),
        description: "test".into(),
        skills: vec![],
        engine: EngineSpec::Exec {
            command: vec!["sh".into(), "-c".into(), script.into()],
            working_dir: None,
            env: BTreeMap::new(),
            timeout_secs: 5,
        },
        session_link: true,
        dedupe_message_ids: true,
    }
}

async fn runtime(dir: &tempfile::TempDir, agents: Vec<AgentSpec>) -> Runtime {
    let journal = Journal::open(dir.path().join("j.db")).unwrap();
    journal
        .upsert_agents(agents.clone(), chrono::Utc::now())
        .await
        .unwrap();
    Runtime::new(
        journal,
        Arc::new(SystemClock),
        agents,
        RuntimeConfig {
            work_dir: dir.path().join("work"),
            idle_worker: Duration::from_secs(60),
        },
    )
}

fn input(agent: &str, id: &str, text: &str) -> Input {
    let mut m = Message::new(Role::User, vec![Part::text(text)]);
    m.message_id = id.into();
    Input {
        principal: Principal::person(),
        agent_id: agent.into(),
        message: m,
        origin: "test".into(),
    }
}

async fn settle(rt: &Runtime, a: &Admitted) -> sextant_core::projection::TaskFold {
    tokio::time::timeout(
        Duration::from_secs(10),
        rt.wait_settled(a.task(), a.task().last_seq),
    )
    .await
    .expect("task settled in time")
    .unwrap()
}

fn artifact_text(f: &sextant_core::projection::TaskFold) -> String {
    f.artifacts
        .iter()
        .flat_map(|a| a.parts.iter())
        .filter_map(|p| p.as_text())
        .collect()
}

#[tokio::test]
async fn echo_completes_with_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir, vec![AgentSpec::echo()]).await;
    let a = rt.admit(input("echo", "m1", "hello")).await.unwrap();
    let f = settle(&rt, &a).await;
    assert_eq!(f.state, TaskState::Completed);
    assert_eq!(artifact_text(&f), "hello");
}

#[tokio::test]
async fn exec_speaks_the_json_lines_protocol() {
    let dir = tempfile::tempdir().unwrap();
    // Reads the turn line, answers in three deltas plus a plain line, then ends the turn.
    let script = r#"read -r turn
case "$turn" in *'"type":"turn"'*) ;; *) echo '{"type":"final","status":"failed","text":"no turn line"}'; exit 0;; esac
echo '{"type":"status","text":"thinking"}'
echo '{"type":"text","text":"Hel"}'
echo '{"type":"text","text":"lo "}'
echo "plain $SEXTANT_AGENT_ID"
echo '{"type":"artifact","name":"data","parts":[{"data":{"n":1}}]}'
echo '{"type":"final","status":"completed","text":"done"}'"#;
    let rt = runtime(&dir, vec![exec_agent("x", script)]).await;
    let a = rt.admit(input("x", "m1", "hi")).await.unwrap();
    let f = settle(&rt, &a).await;
    assert_eq!(f.state, TaskState::Completed, "{:?}", f.status_message);
    assert_eq!(artifact_text(&f), "Hello plain x\n");
    assert_eq!(f.artifacts.len(), 2);
    assert_eq!(
        f.status_message.as_ref().map(message_text).as_deref(),
        Some("done")
    );
    assert!(f.history.iter().any(|m| message_text(m) == "thinking"));
}

#[tokio::test]
async fn exec_failures_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(
        &dir,
        vec![
            exec_agent("bad", "echo 'something broke' >&2; exit 3"),
            exec_agent(
                "ask",
                r#"echo '{"type":"final","status":"input_required","text":"which file?"}'"#,
            ),
        ],
    )
    .await;
    let f = settle(&rt, &rt.admit(input("bad", "m1", "x")).await.unwrap()).await;
    assert_eq!(f.state, TaskState::Failed);
    let why = message_text(f.status_message.as_ref().unwrap());
    assert!(
        why.contains("exited with 3") && why.contains("something broke"),
        "{why}"
    );

    let f = settle(&rt, &rt.admit(input("ask", "m2", "x")).await.unwrap()).await;
    assert_eq!(f.state, TaskState::InputRequired);

    let mut missing = exec_agent("gone", "");
    missing.engine = EngineSpec::Exec {
        command: vec!["/nonexistent/agent".into()],
        working_dir: None,
        env: BTreeMap::new(),
        timeout_secs: 5,
    };
    let dir2 = tempfile::tempdir().unwrap();
    let rt2 = runtime(&dir2, vec![missing]).await;
    let f = settle(&rt2, &rt2.admit(input("gone", "m3", "x")).await.unwrap()).await;
    assert_eq!(f.state, TaskState::Failed);
    assert!(message_text(f.status_message.as_ref().unwrap()).contains("cannot start"));
}

#[tokio::test]
async fn exec_turns_time_out() {
    let dir = tempfile::tempdir().unwrap();
    let mut slow = exec_agent("slow", "sleep 30");
    if let EngineSpec::Exec { timeout_secs, .. } = &mut slow.engine {
        *timeout_secs = 1;
    }
    let rt = runtime(&dir, vec![slow]).await;
    let a = rt.admit(input("slow", "m1", "x")).await.unwrap();
    let f = rt.wait_settled(a.task(), a.task().last_seq).await.unwrap();
    assert_eq!(f.state, TaskState::Failed);
    assert!(message_text(f.status_message.as_ref().unwrap()).contains("timed out"));
}

#[tokio::test]
async fn follow_ups_continue_an_input_required_task_with_history() {
    let dir = tempfile::tempdir().unwrap();
    // Asks once, then completes, echoing how many history messages and inputs it saw.
    let script = r#"read -r turn
case "$turn" in
  *'"text":"more"'*) echo '{"type":"final","status":"completed","text":"thanks"}';;
  *) echo '{"type":"final","status":"input_required","text":"more?"}';;
esac"#;
    let rt = runtime(&dir, vec![exec_agent("x", script)]).await;
    let a = rt.admit(input("x", "m1", "start")).await.unwrap();
    let f = settle(&rt, &a).await;
    assert_eq!(f.state, TaskState::InputRequired);
    let mut follow = input("x", "m2", "more");
    follow.message.task_id = Some(a.task().task_id.clone());
    let b = rt.admit(follow).await.unwrap();
    assert!(matches!(b, Admitted::FollowUp { .. }));
    let f = settle(&rt, &b).await;
    assert_eq!(f.state, TaskState::Completed);
    let texts: Vec<String> = f.history.iter().map(message_text).collect();
    assert_eq!(texts, vec!["start", "more?", "more", "thanks"]);
}

#[tokio::test]
async fn a_second_input_while_the_session_is_being_created_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir, vec![AgentSpec::echo()]).await;
    let key = (
        Principal::person().key(),
        "echo".to_string(),
        "ctx".to_string(),
    );
    rt.inner.creating.lock().unwrap().insert(key.clone());
    let mut i = input("echo", "m1", "x");
    i.message.context_id = Some("ctx".into());
    assert!(matches!(
        rt.admit(i.clone()).await,
        Err(AdmitError::SessionBusy)
    ));
    rt.inner.creating.lock().unwrap().remove(&key);
    let a = rt.admit(i).await.unwrap();
    assert_eq!(settle(&rt, &a).await.state, TaskState::Completed);
}

#[tokio::test]
async fn recovery_delivers_accepted_inputs_and_fails_interrupted_turns() {
    let dir = tempfile::tempdir().unwrap();
    let (queued, interrupted) = {
        let journal = Journal::open(dir.path().join("j.db")).unwrap();
        journal
            .upsert_agents(vec![AgentSpec::echo()], chrono::Utc::now())
            .await
            .unwrap();
        let admit = |id: &str| {
            let mut m = Message::new(Role::User, vec![Part::text("x")]);
            m.message_id = id.into();
            sextant_journal::Admission {
                caller: "c".into(),
                caller_kind: "person".into(),
                agent_id: "echo".into(),
                context_id: None,
                task_id: None,
                message: m,
                content_hash: id.into(),
                input_key: id.into(),
                origin: "test".into(),
                at: chrono::Utc::now(),
            }
        };
        let q = journal
            .admit(admit("q"))
            .await
            .unwrap()
            .unwrap()
            .task()
            .clone();
        let w = journal
            .admit(admit("w"))
            .await
            .unwrap()
            .unwrap()
            .task()
            .clone();
        journal
            .append_one(
                &w.session_id,
                &w.task_id,
                EventBody::TaskState {
                    state: TaskState::Working,
                    message: None,
                },
                chrono::Utc::now(),
            )
            .await
            .unwrap();
        (q, w)
    };
    let rt = runtime(&dir, vec![AgentSpec::echo()]).await;
    assert_eq!(rt.recover().await.unwrap(), 1);
    let f = tokio::time::timeout(Duration::from_secs(10), rt.wait_settled(&queued, 0))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(f.state, TaskState::Completed);
    let row = rt
        .journal()
        .task(&interrupted.task_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.state, TaskState::Failed);
}

#[tokio::test]
async fn message_ids_are_deduplicated_unless_the_agent_turns_it_off() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir, vec![AgentSpec::echo(), AgentSpec::conformance()]).await;
    let a = rt.admit(input("echo", "m1", "one")).await.unwrap();
    assert!(matches!(
        rt.admit(input("echo", "m1", "two")).await,
        Err(AdmitError::Refused(sextant_journal::Refusal::MessageIdReused { .. }))
    ));
    assert!(matches!(rt.admit(input("echo", "m1", "one")).await.unwrap(),
        Admitted::Duplicate { task } if task.task_id == a.task().task_id));

    // The conformance agent: the TCK reuses messageIds as behaviour keys, so every message
    // is a new input there, even an identical one.
    let c1 = rt.admit(input("conformance", "tck-complete-task-s", "one")).await.unwrap();
    let c2 = rt.admit(input("conformance", "tck-complete-task-s", "two")).await.unwrap();
    let c3 = rt.admit(input("conformance", "tck-complete-task-s", "two")).await.unwrap();
    assert!(matches!(c3, Admitted::Created { .. }));
    assert_ne!(c1.task().task_id, c2.task().task_id);
    assert_ne!(c2.task().task_id, c3.task().task_id);
}
