-- CreateTable
CREATE TABLE "SignInLimit" (
    "key" TEXT NOT NULL,
    "windowStart" TIMESTAMPTZ(3) NOT NULL,
    "attempts" INTEGER NOT NULL,

    CONSTRAINT "SignInLimit_pkey" PRIMARY KEY ("key")
);

-- CreateIndex
CREATE INDEX "SignInLimit_windowStart_idx" ON "SignInLimit"("windowStart");
