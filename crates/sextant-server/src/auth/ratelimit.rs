//! Per-identity rate limits (governor's keyed GCRA), checked right after the principal is
//! resolved and before any handler runs.
//!
//! - Remote identities (peers, assistants, JWT holders) share one quota per principal key:
//!   `rate_limit_per_minute` (default 60; bursts up to that many, then one more per
//!   `60/limit` seconds).
//! - The anonymous loopback caller has its own quota, `local_rate_limit_per_minute`, off by
//!   default: it is a process of this machine's user (and the A2A TCK and benchmarks drive it
//!   hard).
//! - The person (console owner) is never limited: their console streams and polls.
//!
//! Keys are principal keys, never addresses, so peers behind one reverse proxy keep separate
//! buckets (Hermes #80534). A refusal is HTTP 429 with `Retry-After` (whole seconds, rounded
//! up) and the REST error shape.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use sextant_core::{Principal, PrincipalKind};

/// Checks between two sweeps of idle keys.
const SWEEP_EVERY: u64 = 1024;

/// The limiters of one server.
pub struct RateLimits {
    remote: Option<DefaultKeyedRateLimiter<String>>,
    local: Option<DefaultKeyedRateLimiter<String>>,
    checks: AtomicU64,
}

fn limiter(per_minute: u32) -> Option<DefaultKeyedRateLimiter<String>> {
    NonZeroU32::new(per_minute).map(|n| RateLimiter::keyed(Quota::per_minute(n)))
}

impl RateLimits {
    /// Quotas per minute (0 = no limit).
    pub fn new(remote_per_minute: u32, local_per_minute: u32) -> Self {
        Self {
            remote: limiter(remote_per_minute),
            local: limiter(local_per_minute),
            checks: AtomicU64::new(0),
        }
    }

    /// Counts one request of `principal`; `Err(wait)` when it is over its quota.
    pub fn check(&self, principal: &Principal) -> Result<(), Duration> {
        let lim = match principal.kind {
            PrincipalKind::Person => return Ok(()),
            PrincipalKind::AnonymousLocal => &self.local,
            _ => &self.remote,
        };
        let Some(lim) = lim else { return Ok(()) };
        if self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            lim.retain_recent();
        }
        lim.check_key(&principal.key())
            .map_err(|not_until| not_until.wait_time_from(DefaultClock::default().now()))
    }
}

/// `Retry-After` for a wait: whole seconds, at least 1.
pub fn retry_after_secs(wait: Duration) -> u64 {
    wait.as_secs() + u64::from(wait.subsec_nanos() > 0).max(u64::from(wait.is_zero()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_identities_are_limited_separately_and_the_person_never() {
        let r = RateLimits::new(3, 0);
        let alice = Principal::peer("alice");
        for _ in 0..3 {
            assert!(r.check(&alice).is_ok());
        }
        let wait = r.check(&alice).unwrap_err();
        assert!(wait <= Duration::from_secs(20), "{wait:?}");
        assert!(retry_after_secs(wait) >= 1);
        assert!(r.check(&Principal::peer("bob")).is_ok());
        for _ in 0..100 {
            assert!(r.check(&Principal::person()).is_ok());
            assert!(r.check(&Principal::anonymous_local()).is_ok());
        }
        assert_eq!(retry_after_secs(Duration::from_millis(1500)), 2);
        assert_eq!(retry_after_secs(Duration::from_secs(3)), 3);
        assert_eq!(retry_after_secs(Duration::ZERO), 1);
    }
}
