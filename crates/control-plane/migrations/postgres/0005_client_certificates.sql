-- Client certificates (mTLS) of targets (src/client_certs/). One row per (tenant, target, id),
-- the id chosen by the client: the upload is INSERT ... ON CONFLICT DO NOTHING, and a second
-- upload under the id is the same one (request_sha256 matches) or refused.
-- The private key is sealed with the main key (src/sealing.rs, bound to tenant, target and id)
-- like signing secrets; the chain is public and kept as PEM.
CREATE TABLE client_certificates (
    tenant          TEXT    NOT NULL,
    target          TEXT    NOT NULL,
    id              TEXT    NOT NULL,
    certificate_pem TEXT    NOT NULL,   -- the chain, leaf first
    private_key     TEXT    NOT NULL,   -- sealed: sy1:<key id>:<base64>
    request_sha256  BYTEA    NOT NULL,   -- SHA-256 of the chain's DER and the key's DER
    fingerprint     TEXT    NOT NULL,   -- SHA-256 of the leaf's DER, hex
    subject         TEXT    NOT NULL,
    not_after       BIGINT  NOT NULL,   -- unix ms
    state           TEXT    NOT NULL CHECK (state IN ('staged', 'active', 'retired')),
    created_at      BIGINT  NOT NULL,
    updated_at      BIGINT  NOT NULL,
    PRIMARY KEY (tenant, target, id)
);
-- At most one active certificate per target, whatever races.
CREATE UNIQUE INDEX client_certificates_one_active ON client_certificates (tenant, target)
    WHERE state = 'active';
