-- Connections whose address a non-admin chose may reach public addresses only (SSRF). Which
-- existing connections were made that way is known only from their creator: those created by
-- anyone who is not an admin now are restricted. The built-in demo model and connections created
-- by the system (no creator) are not. Admins can lift the restriction by saving the base URL again.

-- AlterTable
ALTER TABLE "LlmConnection" ADD COLUMN     "restrictedHosts" BOOLEAN NOT NULL DEFAULT false;

UPDATE "LlmConnection" c SET "restrictedHosts" = true
WHERE c."provider" <> 'demo'
  AND c."createdById" IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM "user" u WHERE u.id = c."createdById" AND u.role = 'admin');
