//! Live fan-out of committed journal events.
//!
//! The writer publishes each event after its transaction commits, in seq order (from one task
//! on the async runtime, or its own thread; see `writer::Deliver`), to the Session's channel
//! and to the all-sessions channel. Subscribers follow DESIGN.md rule 3:
//! subscribe first, then read the journal after their snapshot, drop duplicates by seq, and
//! resynchronise from the journal when they lag.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use sextant_core::JournalEvent;
use tokio::sync::broadcast;

/// Events a Session's channel holds for its slowest subscriber. Every new task's Session gets
/// a channel (its blocking caller follows it), and every open stream keeps its Session's, so it
/// is kept small: a subscriber that falls further behind re-reads the journal. Each slot costs
/// about 50 bytes whether used or not: at 64 a channel was 3.2 KiB, the largest single part of
/// an idle subscription's memory (bench/README.md "Idle subscriptions"); 16 still holds a
/// ten-event turn published in one batch.
const SESSION_CAPACITY: usize = 16;
const ALL_CAPACITY: usize = 4096;
/// Map size from which subscribing sweeps out channels without receivers.
const SWEEP_AT: usize = 64;

/// A live subscription: committed events in seq order.
pub type Live = broadcast::Receiver<Arc<JournalEvent>>;

/// The broadcast hub.
#[derive(Clone)]
pub struct Hub {
    sessions: Arc<Mutex<HashMap<String, broadcast::Sender<Arc<JournalEvent>>>>>,
    all: broadcast::Sender<Arc<JournalEvent>>,
}

impl Default for Hub {
    fn default() -> Self {
        Self {
            sessions: Arc::default(),
            all: broadcast::channel(ALL_CAPACITY).0,
        }
    }
}

impl Hub {
    /// Live events of one Session.
    pub fn subscribe(&self, session_id: &str) -> broadcast::Receiver<Arc<JournalEvent>> {
        let mut map = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        // Channels of Sessions nobody follows any more are dropped as the map grows, so the map
        // holds about as many channels as there are live subscriptions.
        if map.len() >= SWEEP_AT && map.len().is_power_of_two() {
            map.retain(|_, tx| tx.receiver_count() > 0);
        }
        map.entry(session_id.to_string())
            .or_insert_with(|| broadcast::channel(SESSION_CAPACITY).0)
            .subscribe()
    }

    /// Live events of every Session.
    pub fn subscribe_all(&self) -> broadcast::Receiver<Arc<JournalEvent>> {
        self.all.subscribe()
    }

    /// Ends the live subscriptions of a Session: they see the channel closed. For events that
    /// were promised and will not come (an early-answered admission whose batch failed).
    pub(crate) fn close(&self, session_id: &str) {
        let mut map = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        map.remove(session_id);
    }

    /// Publishes a committed event. Channels nobody listens to any more are dropped.
    pub(crate) fn publish(&self, ev: Arc<JournalEvent>) {
        {
            let mut map = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(tx) = map.get(&ev.session_id)
                && (tx.send(ev.clone()).is_err() || tx.receiver_count() == 0)
            {
                map.remove(&ev.session_id);
            }
        }
        let _ = self.all.send(ev);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channels_without_subscribers_do_not_accumulate() {
        let hub = Hub::default();
        for i in 0..10_000 {
            drop(hub.subscribe(&format!("s{i}")));
        }
        let held = hub.sessions.lock().unwrap().len();
        assert!(held <= SWEEP_AT, "{held} channels held");
        let rx = hub.subscribe("live");
        for i in 0..10_000 {
            drop(hub.subscribe(&format!("t{i}")));
        }
        assert!(hub.sessions.lock().unwrap().contains_key("live"));
        drop(rx);
    }
}
