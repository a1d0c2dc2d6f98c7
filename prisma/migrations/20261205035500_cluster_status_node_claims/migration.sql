-- The NodeClaims the sidecar last reported (issue 47): launch failures first, then the newest,
-- at most 20 (REPORT_NODECLAIMS_MAX), null before a report or from a sidecar that sends none.
ALTER TABLE "ClusterStatus" ADD COLUMN "nodeClaims" JSONB;
