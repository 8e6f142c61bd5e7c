import { describe, expect, it } from 'vitest';
import type { CardSummary, PeerView } from './api';
import { callsSummary, emptyPeerForm, hashToPin, latency, peerStatus, registrationBody, registrationErrors, reviewDiffers, shortHash, sortPeers } from './format';

const OLD = 'a'.repeat(64);
const NEW = 'b'.repeat(64);
const NEWER = 'c'.repeat(64);

const peer = (name: string, over: Partial<PeerView> = {}): PeerView => ({
  name,
  url: `http://127.0.0.1:9/${name}/`,
  has_token: false,
  timeout_secs: 120,
  capabilities: [],
  allowed_skills: [],
  allow_private_network: false,
  enabled: true,
  paused_at: null,
  disabled: null,
  pin: { hash: OLD, pinned_at: '2026-12-01T10:00:00.000Z', skills: ['echo'], key: null },
  has_card_jwks: false,
  metrics: { calls: 0, failures: 0, avg_latency_ms: null, last_latency_ms: null, last_call_at: null, last_error: null, hop_limited_at: null },
  created_at: '2026-12-01T10:00:00.000Z',
  updated_at: '2026-12-01T10:00:00.000Z',
  ...over,
});

const disabled = (name: string) =>
  peer(name, {
    enabled: false,
    disabled: { reason: 'card_changed', old_hash: OLD, new_hash: NEW, changes: ['skill added: x (X)'], card_url: 'http://x/.well-known/agent-card.json', seen_at: '2026-12-01T11:00:00.000Z' },
  });

const paused = (name: string) => peer(name, { enabled: false, paused_at: '2026-12-01T12:00:00.000Z' });

const review = (pinHash: string | null, over: Partial<CardSummary> = {}): CardSummary => ({
  name: 'Helper',
  description: 'd',
  version: '1',
  provider: null,
  documentationUrl: null,
  cardUrl: 'http://x/.well-known/agent-card.json',
  jsonrpcUrl: 'http://x/rpc',
  tenant: null,
  interfaces: [],
  auth: { schemes: [], required: [], summary: 'no authentication declared' },
  capabilities: { streaming: false, pushNotifications: false, extendedAgentCard: false, extensions: [] },
  defaultInputModes: [],
  defaultOutputModes: [],
  skills: [],
  skillsTotal: 0,
  pinHash,
  valid: true,
  problems: [],
  signature: { signed: false, kids: [], verified: null, thumbprint: null, problem: null },
  ...over,
});

describe('peers format', () => {
  it('shortens a pin hash to twelve hex digits', () => {
    expect(shortHash(OLD)).toBe('aaaaaaaaaaaa…');
    expect(shortHash('abc')).toBe('abc');
    expect(shortHash(null)).toBe('—');
  });

  it('says latencies and call counts in words', () => {
    expect(latency(null)).toBe('—');
    expect(latency(412.4)).toBe('412 ms');
    expect(latency(1440)).toBe('1.4 s');
    expect(latency(42_000)).toBe('42 s');
    expect(callsSummary(peer('p').metrics)).toEqual({ text: 'no calls yet', tone: 'muted' });
    const m = (calls: number, failures: number) => ({ ...peer('p').metrics, calls, failures });
    expect(callsSummary(m(1, 0))).toEqual({ text: '1 call, no failures', tone: 'ok' });
    expect(callsSummary(m(3, 1))).toEqual({ text: '3 calls, 1 failure', tone: 'warn' });
    expect(callsSummary(m(2, 2))).toEqual({ text: '2 calls, 2 failures', tone: 'bad' });
  });

  it('lists disabled peers first, paused ones last, each by name', () => {
    expect(sortPeers([paused('c'), peer('b'), disabled('z'), peer('a')]).map((p) => p.name)).toEqual(['z', 'a', 'b', 'c']);
  });

  it('says a changed card before a pause', () => {
    expect(peerStatus(peer('a')).label).toBe('Enabled');
    expect(peerStatus(paused('a'))).toMatchObject({ label: 'Paused', tone: 'warn' });
    expect(peerStatus(disabled('a'))).toMatchObject({ label: 'Disabled', tone: 'bad' });
    expect(peerStatus({ ...disabled('a'), paused_at: '2026-12-01T12:00:00.000Z' }).label).toBe('Disabled');
  });

  it('re-pins to the hash the person reviewed, else to the one the server saw', () => {
    const p = disabled('helper');
    expect(hashToPin(p, null)).toBe(NEW);
    expect(hashToPin(p, review(NEWER, { registeredAs: 'helper' }))).toBe(NEWER);
    // A review of another peer, or one without a hash, does not count.
    expect(hashToPin(p, review(NEWER, { registeredAs: 'other' }))).toBe(NEW);
    expect(hashToPin(p, review(null, { registeredAs: 'helper' }))).toBe(NEW);
    // An enabled peer has nothing to re-pin to until its card is reviewed.
    expect(hashToPin(peer('ok'), null)).toBeNull();
    expect(hashToPin(peer('ok'), review(NEW, { registeredAs: 'ok' }))).toBe(NEW);
  });

  it('says whether a reviewed card differs from the pin', () => {
    expect(reviewDiffers(peer('p'), review(OLD, { matchesPin: true }))).toBe(false);
    expect(reviewDiffers(peer('p'), review(NEW, { matchesPin: false }))).toBe(true);
    expect(reviewDiffers(peer('p'), review(NEW))).toBe(true);
    expect(reviewDiffers(peer('p'), review(OLD))).toBe(false);
  });

  it('builds the registration body, leaving out an empty token', () => {
    const f = { ...emptyPeerForm(), name: ' helper ', url: ' http://127.0.0.1:8080 ' };
    expect(registrationBody(f)).toEqual({
      ok: true,
      body: { name: 'helper', url: 'http://127.0.0.1:8080', timeout_secs: 120, allow_private_network: false },
    });
    expect(registrationBody({ ...f, token: 's3cret', timeout: '', allowPrivate: true })).toEqual({
      ok: true,
      body: { name: 'helper', url: 'http://127.0.0.1:8080', token: 's3cret', allow_private_network: true },
    });
  });

  it('puts what the browser can check on its field, every field at once', () => {
    const f = { ...emptyPeerForm(), name: 'helper', url: 'https://h.example' };
    expect(registrationBody({ ...f, name: '  ' })).toEqual({ ok: false, errors: { name: 'a name is required' } });
    expect(registrationBody({ ...f, url: '' })).toMatchObject({ ok: false, errors: { url: expect.any(String) } });
    for (const t of ['0', '3601', '1.5', 'soon']) expect(registrationBody({ ...f, timeout: t })).toMatchObject({ ok: false, errors: { timeout: expect.any(String) } });
    expect(registrationBody({ ...f, timeout: '3600' })).toMatchObject({ ok: true });
    const all = registrationBody({ ...f, name: '', url: ' ', timeout: 'soon' });
    expect(all.ok ? [] : Object.keys(all.errors).sort()).toEqual(['name', 'timeout', 'url']);
  });

  it('puts each field the server refused on its field, and the rest above the form', () => {
    const server = [
      { field: 'name', message: 'name "Bad Name": use 1-64 lowercase letters, digits, \'-\' or \'_\'' },
      { field: 'url', message: 'url: use an https URL (or plain http to loopback)' },
      { field: 'timeout_secs', message: 'timeout_secs: between 1 and 3600' },
      { field: 'token', message: 'token: 1-4096 visible ASCII characters, no spaces' },
    ];
    expect(registrationErrors(server, 'first')).toEqual({
      name: 'name "Bad Name": use 1-64 lowercase letters, digits, \'-\' or \'_\'',
      url: 'use an https URL (or plain http to loopback)',
      timeout: 'between 1 and 3600',
      token: '1-4096 visible ASCII characters, no spaces',
    });
    expect(registrationErrors([], 'peer "helper" already exists')).toEqual({ form: 'peer "helper" already exists' });
    expect(registrationErrors([{ field: 'card_jwks', message: 'card_jwks must be a JWKS' }], 'x')).toEqual({ form: 'card_jwks must be a JWKS' });
  });

  it('shows a peer that cannot work on the URL field, and every problem of its card at once', () => {
    // What the server answers for a card that is not A2A 1.0 JSON (peer_card_invalid).
    const refused = [
      { field: 'url', message: "w's card (http://127.0.0.1:9/.well-known/agent-card.json) is not A2A 1.0 JSON that Sextant can call: …" },
      { field: 'card.version', message: 'the card has no version (it needs a version)' },
      { field: 'card.skills[0].tags', message: 'skill "s" has no tags list' },
      { field: 'card', message: 'the card is not a JSON object' },
    ];
    expect(registrationErrors(refused, refused[0].message)).toEqual({
      url: refused[0].message,
      card: [
        { field: 'version', message: 'the card has no version (it needs a version)' },
        { field: 'skills[0].tags', message: 'skill "s" has no tags list' },
        { field: '(the whole card)', message: 'the card is not a JSON object' },
      ],
    });
    // A closed port: the person-worded message on the URL field, nothing else.
    const closed = 'cannot read w\'s card: connection refused at 127.0.0.1:9: is the peer running?';
    expect(registrationErrors([{ field: 'url', message: closed }], closed)).toEqual({ url: closed });
  });
});
