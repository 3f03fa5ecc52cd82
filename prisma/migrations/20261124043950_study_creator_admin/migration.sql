-- Study roles are enforced from this release: a study's admins (study role "admin") manage its
-- settings and members, researchers write, viewers read. A study's creator becomes its first study
-- admin; creators recorded before this release kept their account role, so give them the role they
-- would get today when their account may hold it (researcher and admin accounts). Data only.
UPDATE "StudyMember" m
SET "role" = 'admin'
FROM "Study" s, "user" u
WHERE m."studyId" = s."id"
  AND m."userId" = s."createdById"
  AND u."id" = m."userId"
  AND m."role" = 'researcher'
  AND u."role" IN ('researcher', 'admin');
