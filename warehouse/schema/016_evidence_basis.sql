-- 016: what each number rests on, who may be picked, and ties (issue 22 steps 7-8;
-- model/eligibility.py, model/ties.py; docs/schema.md, `evidence_basis`).

-- One row per relative_performance row: its basis (measured | validated_estimate |
-- not_validated), the stacks and independent sources behind it, whether it may be named a
-- pick (headline, top-3 lists, recommendations, verdicts) and one caveat sentence.
CREATE TABLE evidence_basis (
    run_date DATE NOT NULL,
    gpu_id VARCHAR NOT NULL,
    workload VARCHAR NOT NULL,
    evidence VARCHAR,                 -- relative_performance.evidence
    basis VARCHAR NOT NULL,
    stacks VARCHAR NOT NULL,          -- comma-joined; '' for none; 'unstated' where the source does not say
    n_sources INTEGER NOT NULL,       -- distinct publishers (MLPerf: submitters) of the rows behind it
    n_results INTEGER NOT NULL,
    eligible BOOLEAN NOT NULL,
    caveat VARCHAR NOT NULL
);

-- The cited software-support statements (sources/data/specs/software_support.csv) per GPU:
-- its own row, else its architecture's.
CREATE TABLE gpu_software_support (
    run_date DATE NOT NULL,
    gpu_id VARCHAR NOT NULL,
    vendor VARCHAR NOT NULL,
    architecture VARCHAR NOT NULL,
    stack VARCHAR NOT NULL,           -- pytorch-cuda | pytorch-rocm | pytorch-xpu
    status VARCHAR NOT NULL,          -- supported | partial | prototype | unofficial | legacy-wheel-only | unsupported
    since VARCHAR,
    detail VARCHAR NOT NULL,
    source_url VARCHAR NOT NULL,
    as_of DATE NOT NULL
);

-- The tied group when the pick's P(best) is under 50 % (comma-joined, ordered, the pick
-- first; NULL: one winner), and what the pick's number rests on.
ALTER TABLE verdicts ADD COLUMN basis VARCHAR;
ALTER TABLE verdicts ADD COLUMN caveat VARCHAR;
ALTER TABLE verdicts ADD COLUMN tie_gpu_ids VARCHAR;
ALTER TABLE verdicts ADD COLUMN tie_system_gpus VARCHAR;
ALTER TABLE recommendations ADD COLUMN tie_gpu_ids VARCHAR;
