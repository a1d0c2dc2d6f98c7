-- One health state per cluster (issue 47, point 3), mutually exclusive, in the order an SRE acts:
-- paused (not reconciled at all), then stale (moves with the clock, so the API takes it live
-- from the lastReportAt index and this key leaves it out), degraded, progressing (the sidecar has
-- not applied the latest generation yet, or reports Progressing=True), healthy. The console's
-- and kfleet's state and Cluster.healthState use the same order (apps/api/src/clusters/health-state.ts).
CREATE FUNCTION fleet_health_key(paused boolean, observed integer, generation integer, conditions jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN paused THEN 'paused'
    WHEN EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(conditions) = 'array' THEN conditions ELSE '[]' END) e
                  WHERE e->>'type' = 'Degraded' AND e->>'status' = 'True') THEN 'degraded'
    WHEN observed IS DISTINCT FROM generation
      OR EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(conditions) = 'array' THEN conditions ELSE '[]' END) e
                  WHERE e->>'type' = 'Progressing' AND e->>'status' = 'True') THEN 'progressing'
    ELSE 'healthy' END
$$;

CREATE OR REPLACE FUNCTION fleet_summary_keys(cid uuid) RETURNS text[]
LANGUAGE sql STABLE AS $$
  SELECT COALESCE((
    SELECT ARRAY['clusters',
                 'platform' || chr(31) || c.platform::text,
                 'topology' || chr(31) || c.topology::text,
                 'sidecarVersion' || chr(31) || COALESCE(s."sidecarVersion", 'unreported'),
                 'health' || chr(31) || fleet_health_key(d.paused, s."observedGeneration", d.generation, s.conditions)]
           || CASE WHEN s."observedGeneration" = d.generation THEN ARRAY['inSync'] ELSE '{}'::text[] END
           || CASE WHEN d.enabled THEN ARRAY['enabled'] ELSE '{}'::text[] END
           || CASE WHEN d."clusterAutoscalerMode" = 'DISABLE' THEN ARRAY['casDisabled'] ELSE '{}'::text[] END
           || CASE WHEN d.paused THEN ARRAY['paused'] ELSE '{}'::text[] END
           || fleet_condition_keys(s.conditions)
      FROM "Cluster" c JOIN "DesiredState" d ON d."clusterId" = c.id JOIN "ClusterStatus" s ON s."clusterId" = c.id
     WHERE c.id = cid), '{}')
$$;

-- Every cluster counted again with its health key: the marks left are folded later as before.
DELETE FROM "FleetSummaryCount";
DELETE FROM "ClusterSummaryKeys";
INSERT INTO "ClusterSummaryKeys" ("clusterId", keys)
SELECT c.id, fleet_summary_keys(c.id) FROM "Cluster" c WHERE fleet_summary_keys(c.id) <> '{}';
INSERT INTO "FleetSummaryCount" (key, count)
SELECT k, count(*)::int FROM "ClusterSummaryKeys", unnest(keys) k GROUP BY k;
