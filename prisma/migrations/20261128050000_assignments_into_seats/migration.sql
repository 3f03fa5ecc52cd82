-- The free-form work items (Assignment) are gone: a person's work is the seats they fill
-- (SessionSeat), listed by the one work queue. Each existing item is kept in the audit log as an
-- 'assignment.archived' row (its study, its assignee, title, instructions, kind, status and dates)
-- before the table is dropped, so nothing is lost silently.
INSERT INTO "AuditLog" (id, "createdAt", "actorUserId", "actorEmail", via, action, "resourceType", "resourceId", "studyId", before, after)
SELECT 'archived-' || a.id, now(), NULL, NULL, 'system', 'assignment.archived', 'assignment', a.id, a."studyId",
       jsonb_build_object(
         'userId', a."userId",
         'userEmail', u.email,
         'kind', a.kind,
         'title', a.title,
         'instructions', a.instructions,
         'status', a.status,
         'createdAt', a."createdAt",
         'updatedAt', a."updatedAt"
       ),
       NULL
FROM "Assignment" a LEFT JOIN "user" u ON u.id = a."userId";

-- DropForeignKey
ALTER TABLE "Assignment" DROP CONSTRAINT "Assignment_studyId_fkey";

-- DropForeignKey
ALTER TABLE "Assignment" DROP CONSTRAINT "Assignment_userId_fkey";

-- DropTable
DROP TABLE "Assignment";
