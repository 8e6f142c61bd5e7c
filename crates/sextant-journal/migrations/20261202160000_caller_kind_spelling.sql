-- One spelling per principal kind. Sessions stored `caller_kind` through serde
-- (`anonymous_local`) while principal keys, access lists and `PrincipalKind::as_str` say
-- `anonymous-local`; readers compared against either. From here on both are
-- `anonymous-local` (serde still reads the old spelling, for JSON already in the journal).
UPDATE sessions SET caller_kind = 'anonymous-local' WHERE caller_kind = 'anonymous_local';
