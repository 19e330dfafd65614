-- Client-certificate rotations (docs/rotation.md "Client certificates (mTLS)"): a `rotations`
-- row with `credential = 'certificate'`. Its stage is the upload, sent directly (the private
-- key is never written here, so a rotation is saved only once the server stored the
-- certificate); its verify is a target test presenting the new certificate (`target_tests`,
-- `<id>:verify:<n>`); its promote the activation of the new certificate and its roll back the
-- re-activation of the old one (`cert_ops`, `<id>:promote`, `<id>:rollback`).
-- The certificates are recorded as the server lists them (JSON `ClientCertificateInfo`: id,
-- fingerprint, subject, not_after, state), never with a key.
ALTER TABLE rotations ADD COLUMN new_certificate_id TEXT;
ALTER TABLE rotations ADD COLUMN old_certificate_id TEXT;
ALTER TABLE rotations ADD COLUMN new_certificate TEXT;
ALTER TABLE rotations ADD COLUMN old_certificate TEXT;
