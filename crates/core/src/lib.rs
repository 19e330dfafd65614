//! The console core (issue 4): profiles, local cache, the SQLite outbox and the sync engine.
