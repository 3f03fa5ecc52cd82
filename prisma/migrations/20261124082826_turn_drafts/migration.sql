-- Drafts of a person's turn kept on the server per (session, message number, person) (issue #12).
-- CreateTable
CREATE TABLE "TurnDraft" (
    "sessionId" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "userId" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "TurnDraft_pkey" PRIMARY KEY ("sessionId","seq","userId")
);

-- CreateIndex
CREATE INDEX "TurnDraft_userId_idx" ON "TurnDraft"("userId");

-- AddForeignKey
ALTER TABLE "TurnDraft" ADD CONSTRAINT "TurnDraft_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "ProtocolSession"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "TurnDraft" ADD CONSTRAINT "TurnDraft_userId_fkey" FOREIGN KEY ("userId") REFERENCES "user"("id") ON DELETE CASCADE ON UPDATE CASCADE;
