use std::collections::BTreeMap;
use std::time::Duration;

use sextant_core::a2a::{Message, Part, Role, TaskState};
use sextant_core::projection::message_text;
use sextant_core::{AgentSpec, EngineSpec, EventBody, Principal};
use sextant_journal::{Admitted, Journal};

use super::*;
use crate::interactions::{AnswerError, AnswerRequest};
use crate::test_support::TestRuntime;

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
            input: Default::default(),
        },
        session_link: true,
        dedupe_message_ids: true,
        access: Default::default(),
        public_card: Default::default(),
        features: Default::default(),
    }
}

async fn runtime(dir: &tempfile::TempDir, agents: Vec<AgentSpec>) -> Runtime {
    TestRuntime::in_dir(dir.path()).agents(agents).start().await
}

/// [`runtime`] after its start-up recovery, with how many tasks that handed to workers.
async fn recovered(dir: &tempfile::TempDir, agents: Vec<AgentSpec>) -> (Runtime, usize) {
    let (rt, recovery) = TestRuntime::in_dir(dir.path()).agents(agents).open().await;
    let redelivered = recovery.run().await.unwrap();
    (rt, redelivered)
}

fn input(agent: &str, id: &str, text: &str) -> Input {
    let mut m = Message::new(Role::User, vec![Part::text(text)]);
    m.message_id = id.into();
    Input {
        principal: Principal::person(),
        agent_id: agent.into(),
        message: m,
        origin: sextant_core::Origin::A2a,
        grant: None,
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
async fn echo_sends_one_artifact_in_the_chunks_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir, vec![AgentSpec::echo()]).await;
    let a = rt
        .admit(input("echo", "m1", "chunks=3 héllo wörld"))
        .await
        .unwrap();
    let f = settle(&rt, &a).await;
    assert_eq!(f.state, TaskState::Completed);
    assert_eq!(f.artifacts.len(), 1, "the chunks fold into one artifact");
    assert_eq!(artifact_text(&f), "héllo wörld");
    let events = rt
        .journal()
        .task_events(&a.task().task_id, 0)
        .await
        .unwrap();
    let chunks: Vec<(bool, bool)> = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::Artifact {
                append, last_chunk, ..
            } => Some((*append, *last_chunk)),
            _ => None,
        })
        .collect();
    assert_eq!(chunks, [(false, false), (true, false), (true, true)]);
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

/// A short turn's start, output and end reach the journal's writer as one job (each job is a
/// hand-off to the writer's thread), and what a turn says is still journalled and published
/// while it waits, not held back to its end.
#[tokio::test]
async fn a_turn_s_output_goes_out_in_one_job_or_as_soon_as_it_waits() {
    use futures::StreamExt;
    let dir = tempfile::tempdir().unwrap();
    let script = r#"read -r turn
echo '{"type":"text","text":"first"}'
sleep 3
echo '{"type":"final","status":"completed","text":"done"}'"#;
    let rt = runtime(&dir, vec![AgentSpec::echo(), exec_agent("x", script)]).await;
    let before = rt.journal().writer_jobs();
    let a = rt.admit(input("echo", "m1", "hello")).await.unwrap();
    let f = settle(&rt, &a).await;
    assert_eq!(f.state, TaskState::Completed);
    // The admission, and the turn's start, output and end in one job.
    assert_eq!(rt.journal().writer_jobs() - before, 2);

    let a = rt.admit(input("x", "m2", "hi")).await.unwrap();
    let events =
        crate::stream::task_events(rt.journal(), a.task(), 0, crate::stream::StopAt::Never);
    let mut texts = events
        .filter_map(|ev| async move {
            let ev = ev.ok()?;
            match &ev.body {
                EventBody::Artifact { artifact, .. } => artifact
                    .parts
                    .iter()
                    .find_map(|p| p.as_text().map(String::from)),
                _ => None,
            }
        })
        .boxed();
    // The process sleeps for 3 s after its first line: the line is out well before.
    let first = tokio::time::timeout(Duration::from_secs(2), texts.next())
        .await
        .expect("the output before the wait is published during it");
    assert_eq!(first.as_deref(), Some("first"));
    assert_eq!(settle(&rt, &a).await.state, TaskState::Completed);
}

/// A subscriber that stops reading while a turn publishes more events than a Session's
/// channel holds still gets every event of the task, once each, in order: it lags, and reads
/// what it missed from the journal.
#[tokio::test]
async fn a_subscriber_that_falls_behind_a_long_turn_gets_every_event_once() {
    use futures::StreamExt;
    let dir = tempfile::tempdir().unwrap();
    let script = r#"read -r turn
sleep 0.3
i=0
while [ $i -lt 80 ]; do echo '{"type":"artifact","name":"part","parts":[{"text":"x"}]}'; i=$((i+1)); done
echo '{"type":"final","status":"completed","text":"done"}'"#;
    let rt = runtime(&dir, vec![exec_agent("burst", script)]).await;
    let a = rt.admit(input("burst", "m1", "go")).await.unwrap();
    let mut events =
        stream::task_events(rt.journal(), a.task(), 0, stream::StopAt::Terminal).boxed();
    // Read the first event while the process sleeps, then stop reading until the turn is
    // over: its eighty-odd events overflow the live channel meanwhile.
    let mut seen = vec![events.next().await.unwrap().unwrap().seq];
    assert_eq!(settle(&rt, &a).await.state, TaskState::Completed);
    while let Some(ev) = events.next().await {
        seen.push(ev.unwrap().seq);
    }
    let stored: Vec<i64> = rt
        .journal()
        .task_events(&a.task().task_id, 0)
        .await
        .unwrap()
        .iter()
        .map(|ev| ev.seq)
        .collect();
    assert!(stored.len() > 80, "{} events", stored.len());
    assert_eq!(seen, stored);
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
        input: Default::default(),
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
    follow.message.task_id = Some(a.task().task_id.to_string());
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
                caller: sextant_core::CallerKey::from_stored("c"),
                caller_kind: sextant_core::PrincipalKind::Person,
                agent_id: "echo".into(),
                context_id: None,
                task_id: None,
                message: m,
                content_hash: id.into(),
                input_key: id.into(),
                origin: sextant_core::Origin::A2a,
                max_active_tasks: None,
                max_context_inputs: None,
                push_config: None,
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
        // What the worker journals when a turn starts; then the process "crashes".
        let ev = |body| sextant_journal::NewEvent {
            task_id: Some(w.task_id.to_string()),
            body,
            at: chrono::Utc::now(),
        };
        journal
            .append(
                &w.session_id,
                vec![
                    ev(EventBody::TurnStarted {
                        through: None,
                        working: false,
                    }),
                    ev(EventBody::TaskState {
                        state: TaskState::Working,
                        message: None,
                    }),
                ],
            )
            .await
            .unwrap();
        (q, w)
    };
    let (rt, redelivered) = recovered(&dir, vec![AgentSpec::echo()]).await;
    assert_eq!(redelivered, 1);
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
        Err(AdmitError::Refused(
            sextant_journal::Refusal::MessageIdReused { .. }
        ))
    ));
    assert!(
        matches!(rt.admit(input("echo", "m1", "one")).await.unwrap(),
        Admitted::Duplicate { task } if task.task_id == a.task().task_id)
    );

    // The conformance agent: the TCK reuses messageIds as behaviour keys, so every message
    // is a new input there, even an identical one.
    let c1 = rt
        .admit(input("conformance", "tck-complete-task-s", "one"))
        .await
        .unwrap();
    let c2 = rt
        .admit(input("conformance", "tck-complete-task-s", "two"))
        .await
        .unwrap();
    let c3 = rt
        .admit(input("conformance", "tck-complete-task-s", "two"))
        .await
        .unwrap();
    assert!(matches!(c3, Admitted::Created { .. }));
    assert_ne!(c1.task().task_id, c2.task().task_id);
    assert_ne!(c2.task().task_id, c3.task().task_id);
}

fn shell_agent(approval_timeout_secs: u64) -> AgentSpec {
    let mut a = AgentSpec::shell();
    a.engine = EngineSpec::Shell {
        working_dir: None,
        timeout_secs: 10,
        approval_timeout_secs,
    };
    a
}

/// Waits until the task waits for a decision; returns the pending interaction.
async fn pending(rt: &Runtime, a: &Admitted) -> sextant_core::Interaction {
    let f = settle(rt, a).await;
    assert_eq!(f.state, TaskState::AuthRequired, "{:?}", f.status_message);
    f.pending_interaction()
        .cloned()
        .expect("a pending interaction")
}

fn answer(task: &str, i: &str, option: &str, mid: &str) -> AnswerRequest {
    AnswerRequest {
        principal: Principal::person(),
        task_id: task.into(),
        interaction_id: i.into(),
        option: option.into(),
        reason: None,
        values: Default::default(),
        message_id: mid.into(),
        digest: None,
    }
}

async fn settled_after(
    rt: &Runtime,
    task: &sextant_journal::TaskRow,
) -> sextant_core::projection::TaskFold {
    tokio::time::timeout(
        Duration::from_secs(10),
        rt.wait_settled(task, task.last_seq),
    )
    .await
    .unwrap()
    .unwrap()
}

#[tokio::test]
async fn shell_commands_wait_for_approval_and_run_on_accept() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir, vec![shell_agent(3600)]).await;
    let a = rt
        .admit(input("shell", "m1", "echo hi; echo oops >&2"))
        .await
        .unwrap();
    let i = pending(&rt, &a).await;
    assert_eq!(
        i.option_ids(),
        vec!["accept", "acceptForSession", "decline", "cancel"]
    );
    assert_eq!(i.command.as_deref(), Some("echo hi; echo oops >&2"));
    assert_eq!(rt.pending_interactions().await.unwrap().len(), 1);

    // Not the owner: refused. An option that was not declared: refused.
    let mut anon = answer(&a.task().task_id, &i.interaction_id, "accept", "a0");
    anon.principal = Principal::anonymous_local();
    assert!(matches!(
        rt.answer(anon).await,
        Err(AnswerError::NotAllowed(crate::Denied::NotAnswerer))
    ));
    assert!(matches!(
        rt.answer(answer(
            &a.task().task_id,
            &i.interaction_id,
            "approve",
            "a0"
        ))
        .await,
        Err(AnswerError::Refused(
            sextant_core::interaction::AnswerRefusal::UnknownOption { .. }
        ))
    ));

    let row = rt
        .answer(answer(&a.task().task_id, &i.interaction_id, "accept", "a1"))
        .await
        .unwrap();
    let f = settled_after(&rt, &row).await;
    assert_eq!(f.state, TaskState::Completed);
    let named = |name: &str| -> String {
        f.artifacts
            .iter()
            .filter(|a| a.name.as_deref() == Some(name))
            .flat_map(|a| a.parts.iter())
            .filter_map(|p| p.as_text())
            .collect()
    };
    assert_eq!(named("output"), "hi\n");
    assert_eq!(named("stderr"), "oops\n");
    assert!(rt.pending_interactions().await.unwrap().is_empty());

    // An identical retry is the same answer; a different one is refused.
    assert!(
        rt.answer(answer(&a.task().task_id, &i.interaction_id, "accept", "a1"))
            .await
            .is_ok()
    );
    assert!(matches!(
        rt.answer(answer(
            &a.task().task_id,
            &i.interaction_id,
            "decline",
            "a2"
        ))
        .await,
        Err(AnswerError::Refused(_))
    ));
}

#[tokio::test]
async fn a_text_message_is_never_an_approval() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir, vec![shell_agent(3600)]).await;
    let a = rt.admit(input("shell", "m1", "true")).await.unwrap();
    let i = pending(&rt, &a).await;
    let mut follow = input("shell", "m2", "approve");
    follow.message.task_id = Some(a.task().task_id.to_string());
    assert!(matches!(
        rt.admit(follow).await,
        Err(AdmitError::AwaitingDecision { .. })
    ));
    let f = rt.project(a.task()).await.unwrap();
    assert_eq!(f.state, TaskState::AuthRequired);
    assert_eq!(
        f.pending_interaction().map(|p| p.interaction_id.clone()),
        Some(i.interaction_id)
    );
}

#[tokio::test]
async fn accept_for_session_skips_the_next_approval_in_that_session_only() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir, vec![shell_agent(3600)]).await;
    let a = rt.admit(input("shell", "m1", "echo same")).await.unwrap();
    let i = pending(&rt, &a).await;
    let row = rt
        .answer(answer(
            &a.task().task_id,
            &i.interaction_id,
            "acceptForSession",
            "x",
        ))
        .await
        .unwrap();
    assert_eq!(settled_after(&rt, &row).await.state, TaskState::Completed);

    // Same Session (same context): runs without asking.
    let mut again = input("shell", "m2", "echo same");
    again.message.context_id = Some(a.task().context_id.to_string());
    let b = rt.admit(again).await.unwrap();
    let f = settle(&rt, &b).await;
    assert_eq!(f.state, TaskState::Completed);
    assert!(f.interactions.is_empty());

    // Another Session: asks again.
    let c = rt.admit(input("shell", "m3", "echo same")).await.unwrap();
    pending(&rt, &c).await;
}

#[tokio::test]
async fn decline_completes_cancel_fails_and_expiry_applies_the_default() {
    let dir = tempfile::tempdir().unwrap();
    let (rt, _) = recovered(&dir, vec![shell_agent(1)]).await; // starts the expiry loop
    let a = rt
        .admit(input("shell", "m1", "touch declined"))
        .await
        .unwrap();
    let i = pending(&rt, &a).await;
    let mut req = answer(&a.task().task_id, &i.interaction_id, "decline", "d");
    req.reason = Some("not now".into());
    let row = rt.answer(req).await.unwrap();
    let f = settled_after(&rt, &row).await;
    assert_eq!(f.state, TaskState::Completed);
    let msg = message_text(f.status_message.as_ref().unwrap());
    assert!(
        msg.contains("declined by you") && msg.contains("not now"),
        "{msg}"
    );
    assert!(!dir.path().join("work/declined").exists());

    let b = rt.admit(input("shell", "m2", "true")).await.unwrap();
    let i = pending(&rt, &b).await;
    let row = rt
        .answer(answer(&b.task().task_id, &i.interaction_id, "cancel", "c"))
        .await
        .unwrap();
    assert_eq!(settled_after(&rt, &row).await.state, TaskState::Failed);

    // Nobody answers: after a second the default (decline) is applied.
    let c = rt
        .admit(input("shell", "m3", "touch expired"))
        .await
        .unwrap();
    let waiting = settle(&rt, &c).await;
    let i = waiting.pending_interaction().cloned().expect("pending");
    // Wait for a state after the auth-required one, however soon the expiry fires.
    let f = tokio::time::timeout(
        Duration::from_secs(10),
        rt.wait_settled(c.task(), waiting.last_seq),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(f.state, TaskState::Completed);
    let (_, given) = f
        .interactions
        .iter()
        .find(|(x, _)| x.interaction_id == i.interaction_id)
        .unwrap();
    let given = given.as_ref().unwrap();
    assert!(given.expired && given.option == "decline" && given.answered_by == "expiry");
    assert!(!dir.path().join("work/expired").exists());
    assert!(matches!(
        rt.answer(answer(
            &c.task().task_id,
            &i.interaction_id,
            "accept",
            "late"
        ))
        .await,
        Err(AnswerError::Refused(
            sextant_core::interaction::AnswerRefusal::Expired
        ))
    ));
}

#[tokio::test]
async fn a_pending_approval_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (task, interaction) = {
        let rt = runtime(&dir, vec![shell_agent(3600)]).await;
        let a = rt
            .admit(input("shell", "m1", "echo resumed"))
            .await
            .unwrap();
        let i = pending(&rt, &a).await;
        rt.shutdown(Duration::from_secs(5)).await;
        (a.task().clone(), i)
    };
    let (rt, _) = recovered(&dir, vec![shell_agent(3600)]).await;
    let pending_now = rt.pending_interactions().await.unwrap();
    assert_eq!(pending_now.len(), 1);
    let row = rt
        .answer(answer(
            &task.task_id,
            &interaction.interaction_id,
            "accept",
            "r",
        ))
        .await
        .unwrap();
    let f = settled_after(&rt, &row).await;
    assert_eq!(f.state, TaskState::Completed, "{:?}", f.status_message);
    assert!(artifact_text(&f).starts_with("resumed"));
}

/// An answer approves one exact action: when the action changes between the question and the
/// answer (here the shell's working directory was reconfigured across a restart), the old
/// answer cannot approve the new action, and nothing runs.
#[tokio::test]
async fn an_answer_cannot_approve_an_action_that_changed_since_it_was_asked() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let command = format!("touch {}", marker.display());
    let (task, interaction) = {
        let rt = runtime(&dir, vec![shell_agent(3600)]).await;
        let a = rt.admit(input("shell", "m1", &command)).await.unwrap();
        let i = pending(&rt, &a).await;
        rt.shutdown(Duration::from_secs(5)).await;
        (a.task().clone(), i)
    };
    let asked = interaction.action.clone().unwrap();
    assert_eq!(asked.exact["command"], command.as_str());
    let mut moved = shell_agent(3600);
    moved.engine = EngineSpec::Shell {
        working_dir: Some(dir.path().join("elsewhere")),
        timeout_secs: 10,
        approval_timeout_secs: 3600,
    };
    let (rt, _) = recovered(&dir, vec![moved]).await;
    let row = rt
        .answer(answer(
            &task.task_id,
            &interaction.interaction_id,
            "accept",
            "r",
        ))
        .await
        .unwrap();
    let f = settled_after(&rt, &row).await;
    assert_eq!(f.state, TaskState::Failed, "{:?}", f.status_message);
    let why = message_text(f.status_message.as_ref().unwrap());
    assert!(
        why.contains("Not run") && why.contains(&asked.digest),
        "{why}"
    );
    assert!(!marker.exists(), "the changed action must not run");
}

#[tokio::test]
async fn exec_agents_ask_and_get_the_answer_on_stdin() {
    let dir = tempfile::tempdir().unwrap();
    // Asks a decision with its own options, then reports the answer it read on stdin.
    let script = r#"read -r turn
echo '{"type":"interaction","kind":"decision","title":"Deploy where?","options":[{"id":"staging","label":"Staging"},{"id":"prod","label":"Production"}],"default_option":"staging"}'
read -r answer
echo "{\"type\":\"final\",\"status\":\"completed\",\"text\":$(printf '%s' "$answer" | sed 's/"/\\"/g; s/^/"/; s/$/"/')}""#;
    let rt = runtime(&dir, vec![exec_agent("x", script)]).await;
    let a = rt.admit(input("x", "m1", "deploy")).await.unwrap();
    let f = settle(&rt, &a).await;
    assert_eq!(f.state, TaskState::InputRequired);
    let i = f.pending_interaction().cloned().unwrap();
    assert_eq!(i.option_ids(), vec!["staging", "prod"]);
    let mut req = answer(&a.task().task_id, &i.interaction_id, "prod", "p");
    req.reason = Some("release day".into());
    let row = rt.answer(req).await.unwrap();
    let f = settled_after(&rt, &row).await;
    assert_eq!(f.state, TaskState::Completed, "{:?}", f.status_message);
    let said = message_text(f.status_message.as_ref().unwrap());
    let said: serde_json::Value = serde_json::from_str(&said).unwrap();
    assert_eq!(said["type"], "answer");
    assert_eq!(said["option"], "prod");
    assert_eq!(said["reason"], "release day");
    assert_eq!(said["interaction_id"], i.interaction_id.as_str());
}

/// An exec Agent with a time limit of `secs` whose command runs `before`, asks for approval,
/// then runs `after` and completes.
fn asking_exec_agent(secs: u64, before: &str, after: &str) -> AgentSpec {
    let script = format!(
        r#"read -r turn
{before}
echo '{{"type":"interaction","title":"Go on?","command":"make release"}}'
read -r answer
{after}
echo '{{"type":"final","status":"completed","text":"went on"}}'"#
    );
    let mut agent = exec_agent("x", &script);
    if let EngineSpec::Exec { timeout_secs, .. } = &mut agent.engine {
        *timeout_secs = secs;
    }
    agent
}

/// An exec or shell turn's time limit counts working time only: the person may take longer
/// than the limit to answer (the approval's own expiry governs that wait) and the turn goes on.
#[tokio::test]
async fn an_exec_turn_s_time_limit_stops_while_a_person_is_asked() {
    let dir = tempfile::tempdir().unwrap();
    let mut shell = shell_agent(3600);
    if let EngineSpec::Shell { timeout_secs, .. } = &mut shell.engine {
        *timeout_secs = 1;
    }
    let rt = runtime(&dir, vec![asking_exec_agent(1, "true", "true"), shell]).await;
    let mut asked = Vec::new();
    for (agent, text) in [("x", "release"), ("shell", "echo went on")] {
        let a = rt.admit(input(agent, "m1", text)).await.unwrap();
        let i = pending(&rt, &a).await;
        asked.push((a.task().task_id.clone(), i));
    }
    // Not waiting for anything to be ready: the person takes longer than the limits.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    for (task_id, i) in asked {
        let f = state_of(&rt, &task_id).await;
        assert_eq!(f.state, TaskState::AuthRequired, "{:?}", f.status_message);
        let row = rt
            .answer(answering(&i, &task_id, "accept", "a1"))
            .await
            .unwrap();
        let f = settled_after(&rt, &row).await;
        assert_eq!(f.state, TaskState::Completed, "{:?}", f.status_message);
    }
    assert!(rt.pending_interactions().await.unwrap().is_empty());
}

/// The working time before the question and after the answer add up to the limit.
#[tokio::test]
async fn an_exec_turn_s_working_time_around_a_question_counts_towards_its_limit() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir, vec![asking_exec_agent(2, "sleep 1.2", "sleep 1.2")]).await;
    let a = rt.admit(input("x", "m1", "release")).await.unwrap();
    let i = pending(&rt, &a).await;
    let row = rt
        .answer(answering(&i, &a.task().task_id, "accept", "a1"))
        .await
        .unwrap();
    let f = settled_after(&rt, &row).await;
    assert_eq!(f.state, TaskState::Failed);
    let said = message_text(f.status_message.as_ref().unwrap());
    assert!(said.contains("timed out after 2 s"), "{said}");
}

/// A task that ends while its card waits (here failed as a crash recovery would fail it)
/// takes the card out of the inbox, and an answer to it is refused.
#[tokio::test]
async fn a_task_that_fails_while_its_card_waits_closes_the_card() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir, vec![asking_exec_agent(60, "true", "true")]).await;
    let a = rt.admit(input("x", "m1", "release")).await.unwrap();
    let i = pending(&rt, &a).await;
    assert_eq!(rt.pending_interactions().await.unwrap().len(), 1);
    let failed = EventBody::TaskState {
        state: TaskState::Failed,
        message: None,
    };
    let task = a.task();
    rt.journal()
        .append_one(&task.session_id, &task.task_id, failed, chrono::Utc::now())
        .await
        .unwrap();
    assert!(rt.pending_interactions().await.unwrap().is_empty());
    let late = answering(&i, &task.task_id, "accept", "late");
    assert!(matches!(
        rt.answer(late).await,
        Err(AnswerError::Refused(
            sextant_core::interaction::AnswerRefusal::TaskTerminal
        ))
    ));
}

#[tokio::test]
async fn a_revoked_caller_sees_the_agent_as_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir, vec![AgentSpec::echo()]).await;
    let me = Principal::person();
    assert!(rt.check_access(&me, "echo").is_ok());
    assert!(rt.check_access(&me, "nope").is_err());
    rt.set_denied("echo", vec![me.key()]);
    assert_eq!(rt.denied("echo"), vec![me.key()]);
    assert!(
        rt.check_access(&me, "echo")
            .unwrap_err()
            .to_string()
            .contains("revoked")
    );
    assert!(matches!(
        rt.check_access(&me, "echo"),
        Err(crate::AccessError::Revoked { .. })
    ));
    assert!(matches!(
        rt.check_access(&me, "nope"),
        Err(crate::AccessError::UnknownAgent(_))
    ));
    assert!(matches!(
        rt.admit(input("echo", "m1", "hi")).await,
        Err(AdmitError::AccessDenied(crate::AccessError::Revoked { .. }))
    ));
    // Restored: the very next input is admitted.
    rt.set_denied("echo", vec![]);
    let a = rt.admit(input("echo", "m2", "hi")).await.unwrap();
    assert_eq!(settle(&rt, &a).await.state, TaskState::Completed);
}

/// A server checks a request's rights once and hands admission its decision: a grant made for
/// exactly this principal and Agent stands for that request (admission does not check again),
/// and nothing else does.
#[tokio::test]
async fn admission_takes_the_request_s_grant_instead_of_checking_again() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir, vec![AgentSpec::echo()]).await;
    let me = Principal::person();
    let anon = Principal::anonymous_local();
    let grant = rt.grant(&me, "echo", Rights::Call).unwrap();
    assert_eq!(grant.rights(), Rights::Call);
    let with = |id: &str, who: &Principal, g: Option<Grant>| Input {
        principal: who.clone(),
        grant: g,
        ..input("echo", id, "hi")
    };
    // Revoked after the request's decision was made: the request stands ...
    rt.set_denied("echo", vec![me.key(), anon.key()]);
    let a = rt
        .admit(with("g1", &me, Some(grant.clone())))
        .await
        .unwrap();
    assert_eq!(settle(&rt, &a).await.state, TaskState::Completed);
    // ... one without a decision is checked, and refused ...
    assert!(matches!(
        rt.admit(with("g2", &me, None)).await,
        Err(AdmitError::AccessDenied(crate::AccessError::Revoked { .. }))
    ));
    // ... and another principal's decision is no decision: checked, refused.
    assert!(matches!(
        rt.admit(with("g3", &anon, Some(grant))).await,
        Err(AdmitError::AccessDenied(crate::AccessError::Revoked { .. }))
    ));
}

/// A turn's outputs are sent to the journal without waiting for each commit; if one is not
/// recorded, the task must not end "completed" without it: it fails, saying why.
#[tokio::test]
async fn a_turn_whose_output_was_not_recorded_fails() {
    let dir = tempfile::tempdir().unwrap();
    // The output fails to commit well before the turn ends.
    let script = r#"read -r turn
echo '{"type":"text","text":"unrecordable"}'
sleep 0.3
echo '{"type":"final","status":"completed","text":"done"}'"#;
    let rt = runtime(&dir, vec![AgentSpec::echo(), exec_agent("x", script)]).await;
    rt.journal()
        .read_for_tests(|c| {
            Ok(c.execute_batch(
                "CREATE TRIGGER refuse_output BEFORE INSERT ON events
                 WHEN NEW.kind = 'artifact' AND NEW.body LIKE '%unrecordable%'
                 BEGIN SELECT RAISE(ABORT, 'disk full'); END;",
            )?)
        })
        .await
        .unwrap();
    // Late (the final state is sent after the failure is known) and at once (echo: output
    // and final state on their way together).
    for (agent, id) in [("x", "m0"), ("echo", "m1")] {
        let a = rt.accept(input(agent, id, "unrecordable")).await.unwrap();
        let (f, _) = tokio::time::timeout(Duration::from_secs(10), rt.wait_accepted(a))
            .await
            .expect("settled")
            .unwrap();
        assert_eq!(f.state, TaskState::Failed, "{agent}");
        assert!(f.artifacts.is_empty());
        let why = f
            .status_message
            .as_ref()
            .map(message_text)
            .unwrap_or_default();
        assert!(why.contains("could not record"), "{why}");
    }

    // Other tasks are not affected.
    let b = rt.accept(input("echo", "m2", "fine")).await.unwrap();
    let (f, _) = rt.wait_accepted(b).await.unwrap();
    assert_eq!(f.state, TaskState::Completed);
    assert_eq!(artifact_text(&f), "fine");
}

/// Makes the transaction that admits `message_id` fail at its commit: the admission itself
/// succeeds, and a deferred foreign key it breaks refuses the commit.
async fn doom_commits_of(rt: &Runtime, message_id: &str) {
    let sql = format!(
        "CREATE TABLE trap_parent (id TEXT PRIMARY KEY);
         CREATE TABLE trap (id TEXT REFERENCES trap_parent(id) DEFERRABLE INITIALLY DEFERRED);
         CREATE TRIGGER doom AFTER INSERT ON tasks WHEN NEW.message_id = '{message_id}'
         BEGIN INSERT INTO trap VALUES ('missing'); END;"
    );
    rt.journal()
        .read_for_tests(move |c| Ok(c.execute_batch(&sql)?))
        .await
        .unwrap();
}

/// A blocking caller's task is handed back before its admission commits, and its turn starts
/// at once. When that commit fails, the wait for the task fails, the task does not exist, and
/// nothing of it was published; the next input is unaffected.
#[tokio::test]
async fn an_early_admission_that_does_not_commit_fails_the_wait() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir, vec![AgentSpec::echo()]).await;
    doom_commits_of(&rt, "doomed").await;
    let mut all = rt.journal().hub().subscribe_all();

    let accepted = rt.accept_early(input("echo", "doomed", "hi")).await;
    let accepted = accepted.expect("answered before the commit");
    let task_id = accepted.admitted.task().task_id.clone();
    let waited = tokio::time::timeout(Duration::from_secs(10), rt.wait_accepted(accepted))
        .await
        .expect("the wait ends");
    let err = waited.expect_err("a task that was never committed");
    assert!(err.to_string().contains("not recorded"), "{err}");
    assert!(rt.journal().task(&task_id).await.unwrap().is_none());

    // The same caller's next input is admitted and runs; the first published event is its.
    let next = rt.accept_early(input("echo", "m2", "fine")).await.unwrap();
    let (fold, _) = rt.wait_accepted(next).await.unwrap();
    assert_eq!(fold.state, TaskState::Completed);
    assert_eq!(artifact_text(&fold), "fine");
    let first = all.recv().await.unwrap();
    assert_eq!(first.task_id.as_deref(), Some(fold.task_id.as_str()));
}

/// Without `accept_early`, a failed commit is the admission's own error.
#[tokio::test]
async fn an_admission_that_does_not_commit_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir, vec![AgentSpec::echo()]).await;
    doom_commits_of(&rt, "doomed").await;
    assert!(rt.accept(input("echo", "doomed", "hi")).await.is_err());
}

/// A turn delivers the inputs up to its `through` seq: an input accepted after the worker read
/// the journal but before its `turn_started` was written is still undelivered (it used to count
/// as delivered because it came before the `turn_started`).
#[test]
fn inputs_after_a_turns_through_seq_are_undelivered() {
    let ev = |seq: i64, body: EventBody| sextant_core::JournalEvent {
        session_id: "s".into(),
        seq,
        task_id: Some("t".into()),
        at: chrono::Utc::now(),
        body,
    };
    let m = |id: &str| {
        let mut m = Message::new(Role::User, vec![Part::text(id)]);
        m.message_id = id.into();
        m
    };
    let events = vec![
        ev(
            1,
            EventBody::TaskCreated {
                message: m("first"),
            },
        ),
        ev(2, EventBody::InputAccepted { message: m("late") }),
        ev(
            3,
            EventBody::TurnStarted {
                through: Some(1),
                working: false,
            },
        ),
    ];
    let (inputs, last) = worker::undelivered_inputs(&events);
    assert_eq!(
        inputs
            .iter()
            .map(|m| m.message_id.as_str())
            .collect::<Vec<_>>(),
        vec!["late"]
    );
    assert_eq!(last, 2);
    // Journals written before `through` existed: everything before the turn_started.
    let legacy = vec![
        ev(
            1,
            EventBody::TaskCreated {
                message: m("first"),
            },
        ),
        ev(
            2,
            EventBody::TurnStarted {
                through: None,
                working: false,
            },
        ),
        ev(3, EventBody::InputAccepted { message: m("next") }),
    ];
    let (inputs, _) = worker::undelivered_inputs(&legacy);
    assert_eq!(inputs.len(), 1);
    assert_eq!(inputs[0].message_id, "next");
}

/// Asserts that exactly `admitted` of a burst's admissions passed and that every other one was
/// refused as `refused` says (listing every outcome otherwise); returns the admitted ones.
fn assert_capped(
    results: &[Result<Admitted, AdmitError>],
    admitted: usize,
    refused: impl Fn(&AdmitError) -> bool,
) -> Vec<&Admitted> {
    let accepted: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    let capped = results
        .iter()
        .filter(|r| r.as_ref().err().is_some_and(&refused))
        .count();
    let outcomes: Vec<String> = results
        .iter()
        .map(|r| match r {
            Ok(a) => format!("accepted {}", a.task().message_id),
            Err(e) => e.to_string(),
        })
        .collect();
    assert_eq!(
        (accepted.len(), capped),
        (admitted, results.len() - admitted),
        "{outcomes:#?}"
    );
    accepted
}

/// A remote caller's cap on concurrent tasks holds however many of its messages arrive at
/// once (the count and the new task are one step of the journal's writer), and a retry of a
/// message already accepted returns its task rather than a refusal.
#[tokio::test]
async fn a_remote_callers_task_cap_holds_for_simultaneous_messages() {
    let dir = tempfile::tempdir().unwrap();
    let gate = dir.path().join("gate");
    let script = format!(
        "read -r turn; while [ ! -f '{}' ]; do sleep 0.05; done; \
         echo '{{\"type\":\"final\",\"status\":\"completed\",\"text\":\"done\"}}'",
        gate.display()
    );
    let mut agent = exec_agent("slow", &script);
    agent.access.call.push("peer:*".into());
    let rt = TestRuntime::in_dir(dir.path())
        .agents(vec![agent])
        .limits(Limits {
            max_concurrent_tasks: 3,
            max_agent_turns_per_context: 0,
        })
        .start()
        .await;
    let alice = |id: String| Input {
        principal: Principal::peer("alice"),
        ..input("slow", &id, "work")
    };
    let sends = (0..24).map(|i| rt.admit(alice(format!("m{i}"))));
    let results = futures::future::join_all(sends).await;
    let accepted = assert_capped(&results, 3, |e| {
        matches!(
            e,
            AdmitError::Refused(sextant_journal::Refusal::TooManyTasks { limit: 3 })
        )
    });

    // A retry of an accepted message is its task, not a fourth one and not a refusal.
    let first = accepted[0].task().clone();
    let retry = rt
        .admit(alice(first.message_id.clone()))
        .await
        .expect("a retry at the cap");
    assert!(matches!(retry, Admitted::Duplicate { .. }), "{retry:?}");
    assert_eq!(retry.task().task_id, first.task_id);

    std::fs::write(&gate, b"open").unwrap();
    for a in accepted {
        assert_eq!(settle(&rt, a).await.state, TaskState::Completed);
    }
    rt.shutdown(Duration::from_secs(5)).await;
}

/// The anti-loop cap on an agent's inputs in one context holds however many of its messages
/// into that context arrive at once: the writer counts the Session's inputs in the admission's
/// own transaction. A new context is not capped by the old one.
#[tokio::test]
async fn an_agents_turn_cap_holds_for_simultaneous_messages_in_one_context() {
    let dir = tempfile::tempdir().unwrap();
    let mut agent = exec_agent(
        "echo",
        "read -r turn; echo '{\"type\":\"final\",\"status\":\"completed\",\"text\":\"ok\"}'",
    );
    agent.access.call.push("peer:*".into());
    let rt = TestRuntime::in_dir(dir.path())
        .agents(vec![agent])
        .limits(Limits {
            max_concurrent_tasks: 0,
            max_agent_turns_per_context: 3,
        })
        .start()
        .await;
    let bob = |id: String, context: Option<&str>| {
        let mut i = Input {
            principal: Principal::peer("bob"),
            ..input("echo", &id, "again")
        };
        i.message.context_id = context.map(String::from);
        i
    };
    let first = rt.admit(bob("first".into(), None)).await.unwrap();
    settle(&rt, &first).await;
    let ctx = first.task().context_id.clone();

    let sends = (0..16).map(|i| rt.admit(bob(format!("m{i}"), Some(&ctx))));
    let results = futures::future::join_all(sends).await;
    let accepted = assert_capped(&results, 2, |e| {
        matches!(
            e,
            AdmitError::Refused(sextant_journal::Refusal::TurnCap { limit: 3 })
        )
    });
    assert!(accepted.iter().all(|a| a.task().context_id == ctx));

    // A retry of an accepted message is its task; a new context goes on.
    let retry = rt
        .admit(bob(accepted[0].task().message_id.clone(), Some(&ctx)))
        .await
        .expect("a retry at the cap");
    assert!(matches!(retry, Admitted::Duplicate { .. }), "{retry:?}");
    let fresh = rt.admit(bob("fresh".into(), None)).await.unwrap();
    assert_ne!(fresh.task().context_id, ctx);
    for a in accepted.into_iter().chain([&fresh]) {
        assert_eq!(settle(&rt, a).await.state, TaskState::Completed);
    }
    rt.shutdown(Duration::from_secs(5)).await;
}

/// A running turn's process groups are listed by task, and `stop_processes` ends them: what
/// cancelling a running task will use.
#[tokio::test]
async fn a_running_turns_process_groups_can_be_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir, vec![exec_agent("x", "read -r turn; sleep 30 & wait")]).await;
    let a = rt.admit(input("x", "m1", "go")).await.unwrap();
    let task = a.task().task_id.clone();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while rt.process_groups(&task).is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the turn's group is listed"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let group = rt.process_groups(&task)[0].clone();
    assert!(group.is_alive());
    assert_eq!(rt.stop_processes(&task, Duration::from_secs(2)).await, 1);
    let f = settle(&rt, &a).await;
    assert_eq!(f.state, TaskState::Failed, "{:?}", f.status_message);
    assert!(rt.process_groups(&task).is_empty());
    assert!(!group.is_alive());
}

/// Reads the task's events live until one matches; panics after 10 s.
async fn until_event(
    rt: &Runtime,
    task: &sextant_journal::TaskRow,
    want: impl Fn(&EventBody) -> bool,
) {
    use futures::StreamExt;
    let events = stream::task_events(rt.journal(), task, 0, stream::StopAt::Never);
    futures::pin_mut!(events);
    let found = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(ev) = events.next().await {
            if want(&ev.unwrap().body) {
                return;
            }
        }
        panic!("the task's events ended");
    });
    found.await.expect("the event came in time");
}

/// The owner's answer to interaction `i`, approving its action's digest.
fn answering(i: &sextant_core::Interaction, task: &str, option: &str, mid: &str) -> AnswerRequest {
    let mut a = answer(task, &i.interaction_id, option, mid);
    a.digest = i.action.as_ref().map(|x| x.digest.clone());
    a
}

fn canceler(reason: Option<&str>) -> CancelRequest {
    CancelRequest {
        by: "you".into(),
        reason: reason.map(String::from),
    }
}

async fn state_of(rt: &Runtime, task_id: &str) -> sextant_core::projection::TaskFold {
    let task = rt.journal().task(task_id).await.unwrap().unwrap();
    rt.project(&task).await.unwrap()
}

#[tokio::test]
async fn canceling_a_running_command_stops_its_group_and_keeps_what_it_printed() {
    let dir = tempfile::tempdir().unwrap();
    // A time limit far beyond the test's: only the cancel can end the command in time.
    let mut agent = shell_agent(3600);
    if let EngineSpec::Shell { timeout_secs, .. } = &mut agent.engine {
        *timeout_secs = 600;
    }
    let rt = runtime(&dir, vec![agent]).await;
    let pid_file = dir.path().join("pid");
    // The whole group ignores SIGTERM, so only the SIGKILL after the grace ends it.
    let command = format!(
        "trap '' TERM; echo $$ > {}; echo started; while true; do sleep 0.1; done",
        pid_file.display()
    );
    let a = rt.admit(input("shell", "m1", &command)).await.unwrap();
    let i = pending(&rt, &a).await;
    let ok = answering(&i, &a.task().task_id, "accept", "a1");
    let task = rt.answer(ok).await.unwrap();
    // What the command prints is journalled while it runs.
    until_event(&rt, &task, |b| {
        matches!(b, EventBody::Artifact { artifact, .. }
            if artifact.parts.iter().any(|p| p.as_text() == Some("started\n")))
    })
    .await;
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let group = rt.process_groups(&task.task_id)[0].clone();
    assert!(group.is_alive());

    let out = rt
        .cancel(&task.task_id, &canceler(Some("took too long")))
        .await
        .unwrap();
    assert!(matches!(out, CancelOutcome::Canceled(ref t) if t.state == TaskState::Canceled));
    let f = state_of(&rt, &task.task_id).await;
    assert_eq!(f.state, TaskState::Canceled);
    let said = message_text(f.status_message.as_ref().unwrap());
    assert_eq!(said, "Canceled by you. Reason: took too long");
    assert_eq!(
        artifact_text(&f),
        "started\n",
        "output before the cancel is kept"
    );

    // SIGTERM is ignored; the grace (5 s here) ends in SIGKILL for the whole group.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while group.is_alive() || std::path::Path::new(&format!("/proc/{pid}")).exists() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the group was killed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Canceling again changes nothing; nothing the turn reported after the cancel was kept.
    let again = rt.cancel(&task.task_id, &canceler(None)).await.unwrap();
    assert!(matches!(again, CancelOutcome::AlreadyCanceled(_)));
    let events = rt.journal().task_events(&task.task_id, 0).await.unwrap();
    let canceled_at = events
        .iter()
        .position(|e| e.body.new_state() == Some(TaskState::Canceled))
        .unwrap();
    assert_eq!(
        canceled_at,
        events.len() - 1,
        "{:?}",
        &events[canceled_at..]
    );
}

#[tokio::test]
async fn canceling_a_task_that_waits_for_a_decision_closes_its_card() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir, vec![shell_agent(3600)]).await;
    let a = rt.admit(input("shell", "m1", "touch x")).await.unwrap();
    let i = pending(&rt, &a).await;
    let out = rt.cancel(&a.task().task_id, &canceler(None)).await.unwrap();
    assert!(matches!(out, CancelOutcome::Canceled(_)));
    assert!(rt.pending_interactions().await.unwrap().is_empty());
    let f = state_of(&rt, &a.task().task_id).await;
    assert_eq!(f.state, TaskState::Canceled);
    let (_, answered) = f
        .interactions
        .iter()
        .find(|(x, _)| x.interaction_id == i.interaction_id)
        .unwrap();
    let answered = answered.as_ref().expect("the card is closed");
    assert_eq!(answered.option, "cancel");
    assert_eq!(answered.answered_by, "you");
    assert_eq!(answered.reason.as_deref(), Some("canceled by you"));
    // An answer after the cancel is refused, and nothing ran.
    let late = answering(&i, &a.task().task_id, "accept", "late");
    assert!(rt.answer(late).await.is_err());
    assert!(!dir.path().join("work").join("x").exists());
}

#[tokio::test]
async fn a_queued_task_is_canceled_and_never_runs() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir, vec![shell_agent(3600)]).await;
    // The Session's worker is held by the first task's question, so the second waits queued.
    let a = rt.admit(input("shell", "m1", "echo first")).await.unwrap();
    let i = pending(&rt, &a).await;
    let mut second = input("shell", "m2", "touch queued");
    second.message.context_id = Some(a.task().context_id.to_string());
    let b = rt.admit(second).await.unwrap();
    assert_eq!(b.task().session_id, a.task().session_id);
    assert_eq!(b.task().state, TaskState::Submitted);
    let out = rt.cancel(&b.task().task_id, &canceler(None)).await.unwrap();
    assert!(matches!(out, CancelOutcome::Canceled(_)));

    // The first task goes on; when its turn ends, the canceled one does not start.
    let no = answering(&i, &a.task().task_id, "decline", "a1");
    let row = rt.answer(no).await.unwrap();
    assert_eq!(settled_after(&rt, &row).await.state, TaskState::Completed);
    let c = rt
        .admit(input_in("shell", "m3", "echo third", &a))
        .await
        .unwrap();
    pending(&rt, &c).await;
    let events = rt
        .journal()
        .task_events(&b.task().task_id, 0)
        .await
        .unwrap();
    assert!(
        !events
            .iter()
            .any(|e| matches!(e.body, EventBody::TurnStarted { .. })),
        "{events:?}"
    );
    assert_eq!(
        state_of(&rt, &b.task().task_id).await.state,
        TaskState::Canceled
    );
}

fn input_in(agent: &str, id: &str, text: &str, a: &Admitted) -> Input {
    let mut i = input(agent, id, text);
    i.message.context_id = Some(a.task().context_id.to_string());
    i
}

#[tokio::test]
async fn an_ended_task_cannot_be_canceled() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir, vec![AgentSpec::echo()]).await;
    let a = rt.admit(input("echo", "m1", "hello")).await.unwrap();
    assert_eq!(settle(&rt, &a).await.state, TaskState::Completed);
    let out = rt.cancel(&a.task().task_id, &canceler(None)).await.unwrap();
    assert_eq!(out, CancelOutcome::AlreadyEnded(TaskState::Completed));
    assert_eq!(
        rt.cancel("no-such-task", &canceler(None)).await.unwrap(),
        CancelOutcome::NotFound
    );
}

#[tokio::test]
async fn a_paused_agent_refuses_new_input_and_its_queued_tasks_wait_until_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir, vec![shell_agent(3600)]).await;
    // One task holds the Session's worker with its question; a second waits queued behind it.
    let a = rt.admit(input("shell", "m1", "echo first")).await.unwrap();
    let i = pending(&rt, &a).await;
    let b = rt
        .admit(input_in("shell", "m2", "echo second", &a))
        .await
        .unwrap();
    assert!(rt.set_agent_paused("shell", true).await.unwrap());
    assert!(!rt.set_agent_paused("nobody", true).await.unwrap());
    assert!(matches!(
        rt.admit(input("shell", "m3", "echo third")).await,
        Err(AdmitError::AgentPaused { .. })
    ));
    // The running task goes on: its answer lands and it ends; the queued one does not start.
    let no = answering(&i, &a.task().task_id, "decline", "a1");
    let row = rt.answer(no).await.unwrap();
    assert_eq!(settled_after(&rt, &row).await.state, TaskState::Completed);
    // A bounded look for something that must not happen: the worker is free, the task queued.
    let started = tokio::time::timeout(
        Duration::from_millis(500),
        until_event(&rt, b.task(), |e| {
            matches!(e, EventBody::TurnStarted { .. })
        }),
    )
    .await;
    assert!(started.is_err(), "a paused agent's queued task started");
    assert_eq!(
        state_of(&rt, &b.task().task_id).await.state,
        TaskState::Submitted
    );
    // Resumed: the queued task runs (it asks its question).
    rt.set_agent_paused("shell", false).await.unwrap();
    pending(&rt, &b).await;

    // Stop all cancels every unfinished task of the Agent.
    let stopped = rt
        .stop_all("shell", &canceler(Some("enough")))
        .await
        .unwrap();
    assert_eq!(stopped, 1);
    assert_eq!(
        state_of(&rt, &b.task().task_id).await.state,
        TaskState::Canceled
    );
}

#[tokio::test]
async fn an_agents_pause_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir, vec![AgentSpec::echo()]).await;
    rt.set_agent_paused("echo", true).await.unwrap();
    rt.shutdown(Duration::from_secs(1)).await;
    drop(rt);
    let (again, _) = recovered(&dir, vec![AgentSpec::echo()]).await;
    assert!(again.agent_paused("echo"));
}

#[tokio::test]
async fn exec_output_is_gathered_capped_and_its_stderr_journalled_while_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let go = dir.path().join("go");
    // 300 quick lines, then a line of stderr; it waits until the test has seen that stderr.
    let script = format!(
        "read -r turn; i=0; while [ $i -lt 300 ]; do echo line-$i; i=$((i+1)); done; \
         echo warming-up >&2; while [ ! -e {} ]; do sleep 0.05; done; echo done",
        go.display()
    );
    let rt = runtime(&dir, vec![exec_agent("x", &script)]).await;
    let a = rt.admit(input("x", "m1", "go")).await.unwrap();
    until_event(&rt, a.task(), |b| {
        matches!(b, EventBody::Artifact { artifact, .. }
            if artifact.name.as_deref() == Some("stderr")
                && artifact.parts.iter().any(|p| p.as_text() == Some("warming-up\n")))
    })
    .await;
    std::fs::write(&go, "").unwrap();
    let f = settle(&rt, &a).await;
    assert_eq!(f.state, TaskState::Completed, "{:?}", f.status_message);
    let text: String = f
        .artifacts
        .iter()
        .filter(|x| x.name.as_deref() == Some("response"))
        .flat_map(|x| x.parts.iter())
        .filter_map(|p| p.as_text())
        .collect();
    let expected: String = (0..300).map(|i| format!("line-{i}\n")).collect::<String>() + "done\n";
    assert_eq!(text, expected);
    // 301 lines, journalled in a few gathered appends, not one each.
    let events = rt
        .journal()
        .task_events(&a.task().task_id, 0)
        .await
        .unwrap();
    let appends = events
        .iter()
        .filter(|e| matches!(&e.body, EventBody::Artifact { artifact, .. } if artifact.name.as_deref() == Some("response")))
        .count();
    assert!(appends < 30, "{appends} appends for 301 lines");
}

#[tokio::test]
async fn exec_text_is_capped_per_turn_and_a_failure_still_names_the_end_of_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let line = "a".repeat(1000);
    // 1.1 MB of text, then a failure whose reason is on stderr.
    let script = format!(
        "read -r turn; i=0; while [ $i -lt 1100 ]; do echo {line}; i=$((i+1)); done; \
         echo 'disk full' >&2; exit 3"
    );
    let rt = runtime(&dir, vec![exec_agent("x", &script)]).await;
    let a = rt.admit(input("x", "m1", "go")).await.unwrap();
    let f = settle(&rt, &a).await;
    assert_eq!(f.state, TaskState::Failed);
    let why = message_text(f.status_message.as_ref().unwrap());
    assert!(why.contains("exited with 3: disk full"), "{why}");
    let text: String = f
        .artifacts
        .iter()
        .filter(|x| x.name.as_deref() == Some("response"))
        .flat_map(|x| x.parts.iter())
        .filter_map(|p| p.as_text())
        .collect();
    assert!(
        text.ends_with("[output cut at 1 MiB]\n"),
        "{}",
        &text[text.len() - 60..]
    );
    assert!(text.len() < 1024 * 1024 + 100, "{}", text.len());
}

/// A cancel racing an accept, hundreds of times.
mod cancel_race;
