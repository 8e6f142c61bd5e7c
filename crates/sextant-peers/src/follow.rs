//! Following a remote task: the one mechanism the `a2a` engine ([`crate::engine`]),
//! `a2a_call` and `a2a_orchestrate` ([`crate::call`]) and recovery after a restart use to read
//! a peer's task to the point where this side has something to do.
//!
//! - **One rule for "settled"** ([`Follower::take`]): the remote task ended, answered with a
//!   Message, or waits for a decision that is *new* and that *this side* answers. Two waits
//!   are read past: the one this side just answered (a follow-up's stream may open with the
//!   old snapshot: spec §11.7 allows a snapshot first, and the JS SDK sends the waiting task),
//!   and one the peer says its own person answers ([`answered_at`]: a Sextant peer keeps its
//!   approvals in its own inbox and never takes them by message), which is reported once and
//!   followed until the task goes on.
//! - **Output by difference** ([`Forwarded`]): a snapshot (GetTask, or a stream's first
//!   event) forwards only what was not forwarded yet, so reading a task again after a
//!   resubscription neither repeats nor drops output, whatever mix of chunks and snapshots
//!   the peer sends.
//! - **Reading** ([`follow_until_settled`]): subscribe when the peer streams, else (and when a
//!   stream ends or fails first) read with GetTask, waiting 1 s, 2 s, 4 s … at most 60 s
//!   between reads; the wait starts over whenever something new arrives.

use std::time::{Duration, Instant};

use futures::StreamExt;
use sextant_core::a2a::{Artifact, Part, PartContent, StreamResponse, TaskState};
use sextant_core::action::{Mode, escape};
use sextant_core::ids::new_id;
use sextant_core::parts::artifact;

use crate::client::Accumulated;
use crate::{PeerConnection, Peers};

/// The field of a remote interaction (in its status message's `interaction` data part) that
/// says the peer's own person answers it, and where: a Sextant's console URL. Such a wait is
/// never answered by message (docs/peers.md "Approvals across Sextants").
pub const ANSWERED_AT: &str = "answeredAt";

/// Longest pause between two reads of a followed remote task.
const MAX_DELAY: Duration = Duration::from_secs(60);

/// Where the remote task's own person answers its wait, when its status message says so: an
/// `http(s)` URL, at most 2,000 characters, escaped for display.
pub fn answered_at(acc: &Accumulated) -> Option<String> {
    let status = acc.status_message.as_ref()?;
    status.parts.iter().find_map(|p| {
        let PartContent::Data(v) = &p.content else {
            return None;
        };
        let at = v.get("interaction").unwrap_or(v).get(ANSWERED_AT)?;
        let at = at.as_str()?.trim();
        let ok = (at.starts_with("https://") || at.starts_with("http://")) && at.len() <= 2000;
        ok.then(|| escape(at, Mode::Text).text)
    })
}

/// What identifies one wait of a remote task: its state and status message (id and text).
/// The same wait read again (a snapshot) has the same mark; a new question has a new one.
pub fn mark(acc: &Accumulated) -> Option<String> {
    if !acc.is_interrupted() {
        return None;
    }
    let m = acc.status_message.as_ref();
    Some(format!(
        "{:?}\u{1f}{}\u{1f}{}",
        acc.state,
        m.map(|m| m.message_id.as_str()).unwrap_or_default(),
        acc.status_text()
    ))
}

/// Where a followed task's output goes: the local task of the `a2a` engine's turn, or the
/// outbound task of an `a2a_call`.
pub trait Output: Send {
    /// Records (a chunk of) an artifact.
    fn artifact(
        &mut self,
        artifact: Artifact,
        append: bool,
        last_chunk: bool,
    ) -> impl Future<Output = Result<(), String>> + Send;
    /// Records progress text (the local task stays working).
    fn progress(&mut self, text: String) -> impl Future<Output = Result<(), String>> + Send;
}

/// The text of `parts`, joined.
pub(crate) fn texts(parts: &[Part]) -> String {
    parts.iter().filter_map(Part::as_text).collect()
}

/// Where an exchange's reading sends output: nowhere. The exchange journals its reply
/// once, when it concludes (`Peers::conclude`).
pub(crate) struct Quiet;

impl Output for Quiet {
    async fn artifact(&mut self, _: a2a::Artifact, _: bool, _: bool) -> Result<(), String> {
        Ok(())
    }
    async fn progress(&mut self, _: String) -> Result<(), String> {
        Ok(())
    }
}

/// The parts of an exchange a background follower needs.
pub(crate) struct Unsettled<'a> {
    pub follower: &'a Follower,
    pub streamed: bool,
}

/// The parts of each remote artifact already forwarded, in order of first appearance.
#[derive(Debug, Default, Clone)]
pub struct Forwarded {
    sent: Vec<(String, Vec<Part>)>,
}

impl Forwarded {
    fn entry(&mut self, id: &str) -> Option<&mut Vec<Part>> {
        self.sent.iter_mut().find(|(i, _)| i == id).map(|(_, p)| p)
    }

    /// Records a chunk as the peer sent it, and returns it to forward unchanged.
    fn chunk(&mut self, a: &Artifact, append: bool) {
        match self.entry(&a.artifact_id) {
            Some(parts) if append => parts.extend(a.parts.iter().cloned()),
            Some(parts) => *parts = a.parts.clone(),
            None => self.sent.push((a.artifact_id.clone(), a.parts.clone())),
        }
    }

    /// What of a snapshot's artifact was not forwarded yet: `None` when nothing; else the
    /// artifact to send and whether it appends. A snapshot that extends what was sent (more
    /// parts, or a last text part that grew) appends the difference; one that differs
    /// otherwise replaces the artifact.
    fn missing(&mut self, a: &Artifact) -> Option<(Artifact, bool)> {
        let Some(sent) = self.entry(&a.artifact_id) else {
            self.sent.push((a.artifact_id.clone(), a.parts.clone()));
            return Some((a.clone(), false));
        };
        let same = sent
            .iter()
            .zip(&a.parts)
            .take_while(|(x, y)| x == y)
            .count();
        let with = |parts: Vec<Part>| {
            let mut d = a.clone();
            d.parts = parts;
            d
        };
        let delta = if same == sent.len() {
            if a.parts.len() == same {
                return None;
            }
            Some((with(a.parts[same..].to_vec()), true))
        } else if same + 1 == sent.len()
            && let (Some(old), Some(new)) = (
                sent[same].as_text(),
                a.parts.get(same).and_then(Part::as_text),
            )
            && let Some(tail) = new.strip_prefix(old)
        {
            let mut parts = vec![Part::text(tail)];
            parts.extend(a.parts[same + 1..].iter().cloned());
            Some((with(parts), true))
        } else if a.parts.len() < sent.len() && same == a.parts.len() {
            // A snapshot that shows less than was streamed (a peer that keeps only part of
            // it): nothing new, and what was forwarded stays.
            return None;
        } else {
            Some((a.clone(), false))
        };
        *sent = a.parts.clone();
        delta
    }
}

/// One followed remote task: what it is as far as it was read, and what was forwarded.
#[derive(Debug, Clone)]
pub struct Follower {
    pub acc: Accumulated,
    /// The wait this side answered, read past until the task goes on.
    past: Option<String>,
    /// The next event is the first of a follow-up's stream: a waiting snapshot there is the
    /// old wait.
    first_of_followup: bool,
    /// The wait last reported as answered by the peer's person.
    reported: Option<String>,
    forwarded: Forwarded,
    peer: String,
}

impl Follower {
    pub fn new(peer: &str, acc: Accumulated) -> Self {
        Self {
            acc,
            past: None,
            first_of_followup: false,
            reported: None,
            forwarded: Forwarded::default(),
            peer: peer.to_string(),
        }
    }

    /// About to read the stream of a follow-up that answers the wait `answered` (its mark).
    pub fn answering(&mut self, answered: Option<String>) {
        self.past = answered.or_else(|| mark(&self.acc));
        self.first_of_followup = true;
    }

    /// The wait the remote task is in, when its own person answers it: where.
    pub fn waits_elsewhere(&self) -> Option<String> {
        if self.acc.is_interrupted() {
            answered_at(&self.acc)
        } else {
            None
        }
    }

    /// Applies one event: forwards what is new in it to `out`, and says whether the task is
    /// settled (see the module docs).
    pub async fn take(
        &mut self,
        ev: &StreamResponse,
        out: &mut impl Output,
    ) -> Result<bool, String> {
        let first_of_followup = std::mem::take(&mut self.first_of_followup);
        self.acc.apply(ev);
        if !self.acc.is_interrupted() {
            self.past = None;
            self.reported = None;
        }
        match ev {
            StreamResponse::Task(t) => {
                for a in t.artifacts.iter().flatten() {
                    if let Some((d, append)) = self.forwarded.missing(a) {
                        out.artifact(d, append, true).await?;
                    }
                }
            }
            StreamResponse::ArtifactUpdate(u) => {
                let append = u.append == Some(true);
                self.forwarded.chunk(&u.artifact, append);
                out.artifact(u.artifact.clone(), append, u.last_chunk == Some(true))
                    .await?;
            }
            StreamResponse::StatusUpdate(s) if s.status.state == TaskState::Working => {
                if let Some(m) = &s.status.message {
                    let text = texts(&m.parts);
                    if !text.trim().is_empty() {
                        out.progress(text).await?;
                    }
                }
            }
            StreamResponse::Message(m) => {
                out.artifact(artifact(new_id(), "response", m.parts.clone()), false, true)
                    .await?;
            }
            StreamResponse::StatusUpdate(_) => {}
        }
        if self.acc.is_terminal() || self.acc.message.is_some() {
            return Ok(true);
        }
        if !self.acc.is_interrupted() {
            return Ok(false);
        }
        let now = mark(&self.acc);
        if let Some(at) = answered_at(&self.acc) {
            if self.reported != now {
                self.reported = now;
                out.progress(waiting_text(&self.peer, &self.acc, &at))
                    .await?;
            }
            return Ok(false);
        }
        let snapshot = matches!(ev, StreamResponse::Task(_));
        let old = (first_of_followup && snapshot) || (self.past.is_some() && self.past == now);
        Ok(!old)
    }
}

/// What a remote wait asks, in a person's words: the command it would run, else its
/// interaction's title, else the first line of its status text (the rest of a Sextant's
/// status text is written for programs).
fn asked(acc: &Accumulated) -> String {
    let interaction = acc.status_message.as_ref().and_then(|m| {
        m.parts.iter().find_map(|p| match &p.content {
            PartContent::Data(v) => v.get("interaction").cloned(),
            _ => None,
        })
    });
    let field = |k: &str| {
        interaction
            .as_ref()
            .and_then(|i| i.get(k))
            .and_then(|v| v.as_str())
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
    };
    if let Some(c) = field("command") {
        return format!("run `{c}`");
    }
    field("title").unwrap_or_else(|| {
        acc.status_text()
            .trim()
            .lines()
            .next()
            .unwrap_or_default()
            .to_string()
    })
}

/// What the local task says while the peer's person decides.
pub fn waiting_text(peer: &str, acc: &Accumulated, at: &str) -> String {
    let what = if acc.state == Some(TaskState::AuthRequired) {
        "an approval"
    } else {
        "an answer"
    };
    let question = escape(&asked(acc), Mode::Text).text;
    let question = sextant_core::text::cut(&question, 500).to_string();
    let id = acc.task_id.as_deref().unwrap_or("?");
    if question.is_empty() {
        format!(
            "Waiting for the person at {peer} to give {what} in their own inbox ({at}); \
             {peer}'s task {id} goes on after that, and this task follows it."
        )
    } else {
        format!(
            "Waiting for the person at {peer} to give {what} in their own inbox ({at}): \
             {question}; {peer}'s task {id} goes on after that, and this task follows it."
        )
    }
}

/// Reads the remote task `follower.acc.task_id` until it settles ([`Follower::take`]): a
/// subscription while the peer streams, GetTask otherwise and whenever a subscription ends
/// first, with the backoff the module docs describe. Network errors only make it wait.
/// Dropping the future stops following; nothing is lost, since the next follower starts from
/// a snapshot.
pub async fn follow_until_settled(
    peers: &Peers,
    conn: &PeerConnection,
    follower: &mut Follower,
    out: &mut impl Output,
) -> Result<(), String> {
    let Some(id) = follower.acc.task_id.clone() else {
        return Ok(());
    };
    let mut delay = Duration::from_secs(1);
    loop {
        let before = follower.acc.events;
        let mut new = false;
        if conn.streaming {
            let opened = Instant::now();
            match peers.client().subscribe_to_task(&conn.endpoint, &id).await {
                Ok(mut s) => {
                    while let Some(Ok(ev)) = s.next().await {
                        new = true;
                        if follower.take(&ev, out).await? {
                            return Ok(());
                        }
                    }
                    // A subscription that stayed open its whole time was working: no backoff.
                    if opened.elapsed() >= delay {
                        delay = Duration::from_secs(1);
                    }
                }
                Err(e) => {
                    tracing::debug!(peer = %conn.name, error = %e, "subscribing to a followed task failed")
                }
            }
        }
        match peers.client().get_task(&conn.endpoint, &id, Some(0)).await {
            Ok(task) => {
                if follower.take(&StreamResponse::Task(task), out).await? {
                    return Ok(());
                }
            }
            Err(e) => {
                tracing::debug!(peer = %conn.name, error = %e, "reading a followed task failed; trying again")
            }
        }
        if new || follower.acc.events > before + 1 {
            delay = Duration::from_secs(1);
        }
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(MAX_DELAY);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[derive(Default)]
    struct Seen {
        chunks: Vec<(String, bool)>,
        progress: Vec<String>,
    }

    impl Output for Seen {
        async fn artifact(&mut self, a: Artifact, append: bool, _: bool) -> Result<(), String> {
            let t: String = a.parts.iter().filter_map(Part::as_text).collect();
            self.chunks.push((t, append));
            Ok(())
        }
        async fn progress(&mut self, text: String) -> Result<(), String> {
            self.progress.push(text);
            Ok(())
        }
    }

    impl Seen {
        /// The artifact's text as a reader of the forwarded chunks rebuilds it.
        fn text(&self) -> String {
            let mut out = String::new();
            for (t, append) in &self.chunks {
                if !append {
                    out.clear();
                }
                out.push_str(t);
            }
            out
        }
    }

    fn ev(v: Value) -> StreamResponse {
        serde_json::from_value(v).expect("a stream response")
    }

    fn ticks(n: usize) -> Value {
        let parts: Vec<Value> = (0..n)
            .map(|i| json!({"text": format!("tick {i}\n")}))
            .collect();
        json!({"task": {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"},
            "artifacts": [{"artifactId": "out", "parts": parts}]}})
    }

    fn chunk(i: usize) -> Value {
        json!({"artifactUpdate": {"taskId": "t", "contextId": "c", "append": i > 0,
            "artifact": {"artifactId": "out", "parts": [{"text": format!("tick {i}\n")}]}}})
    }

    fn waiting(id: &str, text: &str, extra: Value) -> Value {
        let mut interaction = json!({"options": [{"id": "yes", "label": "Yes"}]});
        if let (Some(i), Some(e)) = (interaction.as_object_mut(), extra.as_object()) {
            i.extend(e.clone());
        }
        json!({"statusUpdate": {"taskId": "t", "contextId": "c", "status": {
            "state": "TASK_STATE_AUTH_REQUIRED",
            "message": {"messageId": id, "role": "ROLE_AGENT", "parts": [
                {"text": text}, {"data": {"interaction": interaction}}]}}}})
    }

    fn all_ticks(n: usize) -> String {
        (0..n).map(|i| format!("tick {i}\n")).collect()
    }

    #[tokio::test]
    async fn chunks_then_snapshots_forward_every_tick_once() {
        // Streamed ticks 0–9, then the stream died; GetTask shows 0–11, then 0–11 again.
        let mut f = Follower::new("p", Accumulated::default());
        let mut out = Seen::default();
        for i in 0..10 {
            assert!(!f.take(&ev(chunk(i)), &mut out).await.expect("take"));
        }
        f.take(&ev(ticks(12)), &mut out).await.expect("take");
        f.take(&ev(ticks(12)), &mut out).await.expect("take");
        assert_eq!(out.text(), all_ticks(12));
        assert_eq!(out.chunks.len(), 11, "ten chunks and one difference");
    }

    #[tokio::test]
    async fn a_snapshot_whose_last_text_grew_appends_the_tail() {
        let mut f = Follower::new("p", Accumulated::default());
        let mut out = Seen::default();
        let snap = |t: &str| {
            ev(
                json!({"task": {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"},
                "artifacts": [{"artifactId": "a", "parts": [{"text": t}]}]}}),
            )
        };
        f.take(&snap("Hel"), &mut out).await.expect("take");
        f.take(&snap("Hello"), &mut out).await.expect("take");
        f.take(&snap("Bye"), &mut out).await.expect("take");
        assert_eq!(
            out.chunks,
            vec![
                ("Hel".into(), false),
                ("lo".into(), true),
                ("Bye".into(), false)
            ]
        );
    }

    #[tokio::test]
    async fn the_answered_wait_is_read_past_and_a_new_one_settles() {
        let mut f = Follower::new("p", Accumulated::default());
        let mut out = Seen::default();
        assert!(
            f.take(&ev(waiting("q1", "Which?", json!({}))), &mut out)
                .await
                .expect("take")
        );
        f.answering(None);
        // The follow-up's stream opens with the old wait, as a snapshot and as a status.
        let snapshot = json!({"task": {"id": "t", "contextId": "c", "status": {
            "state": "TASK_STATE_AUTH_REQUIRED",
            "message": {"messageId": "q1", "role": "ROLE_AGENT", "parts": [{"text": "Which?"}]}}}});
        assert!(!f.take(&ev(snapshot), &mut out).await.expect("take"));
        assert!(
            !f.take(&ev(waiting("q1", "Which?", json!({}))), &mut out)
                .await
                .expect("take")
        );
        // A new question settles, even with the same words.
        assert!(
            f.take(&ev(waiting("q2", "Which?", json!({}))), &mut out)
                .await
                .expect("take")
        );
    }

    #[tokio::test]
    async fn a_wait_the_peers_person_answers_is_reported_once_and_followed() {
        let mut f = Follower::new("B", Accumulated::default());
        let mut out = Seen::default();
        let at = json!({ ANSWERED_AT: "https://b.example/inbox" });
        for _ in 0..3 {
            let w = waiting("q1", "Run `touch F`?", at.clone());
            assert!(!f.take(&ev(w), &mut out).await.expect("take"));
        }
        assert_eq!(out.progress.len(), 1, "{:?}", out.progress);
        assert!(
            out.progress[0].contains("the person at B"),
            "{:?}",
            out.progress
        );
        assert!(out.progress[0].contains("https://b.example/inbox"));
        let done = json!({"statusUpdate": {"taskId": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_COMPLETED"}}});
        assert!(f.take(&ev(done), &mut out).await.expect("take"));
        // Not a URL: an ordinary wait, answered here.
        let mut g = Follower::new("B", Accumulated::default());
        let w = waiting("q1", "?", json!({ ANSWERED_AT: "javascript:alert(1)" }));
        assert!(g.take(&ev(w), &mut out).await.expect("take"));
    }
}
