-- Extra header values (e.g. X-Api-Key) are secrets: they move to an encrypted column. SQL cannot
-- encrypt, so existing plaintext values are sealed by the application on its next start (or by
-- `parley worker`): sealLegacyHeaders() in lib/server/llm/header-secrets.ts. Until then they keep
-- working from the old column.

-- AlterTable
ALTER TABLE "LlmConnection" ADD COLUMN     "extraHeadersEnc" TEXT;
