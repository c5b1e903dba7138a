#!/usr/bin/env bash
# halo_parts.sh: strategies as parts at 4 ranks (2x2x1): compositions on the
# command line, invalid ones refused with the reason, the parts and traits in
# the JSON, --compute, and rows this MPI library lacks.
source "$(dirname "$0")/lib.sh"
np=4
dir=$(scratch)
cd "$dir"
halo=("$CHECKMPI_BIN/checkmpi-halo" --backend host)
write_input file.input 12 10 8 2 2 1 6 3

# A composition that is no row gets an id of its own; one that is a row is that row.
run_mpi $np "${halo[@]}" --strategy pack=kernel,transport=persistent,overlap=interior,completion=waitany,step2 \
  --self-copy --json c.json --outdir c >c.txt 2>&1 || fail "composition run: $(tail -3 c.txt)"
json_is c.json '[r["strategy"] for r in doc["results"]] == ["custom1", "step2"]'
json_is c.json 'doc["results"][0]["catalog"]["alias"] == "pack=kernel,transport=persistent,overlap=interior,completion=waitany"'
json_is c.json 'doc["results"][0]["parts"] == {"pack": "kernel", "buffers": "backend", "transport": "persistent",
  "schedule": "all-at-once", "completion": "waitany", "overlap": "interior", "compute": "in-place"}'
json_is c.json 'all(r["valid"] for r in doc["results"])'
json_is c.json 'doc["results"][1]["parts"]["compute"] == "in-place"'  # in place on the host by default
json_is c.json 'doc["config"]["compute"] == "in-place"'
grep -q "^  compute        : in-place: each field shifted in its own array, swept against its direction$" c.txt ||
  fail "header: $(grep compute c.txt)"
# Traits: z has one rank and --self-copy, so only x and y go through MPI.
# Local 6x5x8: planes of 7x10 (x), 8x10 (y), 8x7 (z) cells, 3 fields, 2 signs, 4 bytes.
json_is c.json 'doc["results"][0]["traits"] == {"messages": 4, "mpi_bytes": {"x": 1680, "y": 1920, "z": 0},
  "halo_bytes": {"x": 1680, "y": 1920, "z": 1344}, "message_bytes": {"x": 840, "y": 960, "z": 672}, "diagonal_bytes": 0,
  "kernel_passes": 1, "overlaps": True}'
run_mpi $np "${halo[@]}" --strategy pack=kernel,transport=isend-irecv --json r7.json --outdir r7 >/dev/null 2>&1 ||
  fail "step7 as a composition"
json_is r7.json '[r["strategy"] for r in doc["results"]] == ["step7"]'

# step0: 18 messages a step, neighbor-alltoallw one per neighbour; two-pass
# compute: two kernel passes, in the header and config.
run_mpi $np "${halo[@]}" --strategy step0,step7,neighbor-alltoallw --compute two-pass --json t.json --outdir t >t.txt 2>&1 ||
  fail "two-pass run: $(tail -3 t.txt)"
grep -q "^  compute        : two-pass: CheckMPI's: host-packing steps in place, kernel steps copy, then shift (FAST variant)$" t.txt ||
  fail "header lacks the compute mode: $(grep compute t.txt)"
json_is t.json 'doc["config"]["compute"] == "two-pass"'
json_is t.json '[(r["traits"]["messages"], r["traits"]["kernel_passes"], r["parts"]["compute"]) for r in doc["results"]]
  == [(18, 1, "in-place"), (6, 2, "two-pass"), (6, 1, "in-place")]'

# mock: no message in the timed loop, and the table says how the halos came.
run_mpi $np "${halo[@]}" --strategy mock --json m.json --outdir m >m.txt 2>&1 || fail "mock: $(tail -3 m.txt)"
grep -q '^  mock no-mpi .* valid  (halos delivered by an untimed exchange)$' m.txt || fail "mock row: $(grep mock m.txt)"
json_is m.json 'doc["results"][0]["traits"]["messages"] == 0 and doc["results"][0]["valid"]'

# Invalid compositions and options: exit 2, one line, the reason.
np=$np expect_error "strategy pack=dtype,transport=rma-fence is not a valid combination: transport=rma-fence sends packed messages" \
  --strategy pack=dtype,transport=rma-fence
np=$np expect_error "overlap=interior needs a transport that returns before the data arrive, not transport=sendrecv" \
  --strategy transport=sendrecv,overlap=interior
np=$np expect_error "strategy part transport=pigeon is unknown" --strategy transport=pigeon
np=$np expect_error "--compute must be auto, in-place, one-pass or two-pass, got 'three-pass'" --compute three-pass

# In place unless MPI reads and writes the fields while they are shifted (datatypes with overlap): such a
# composition runs one-pass (the header says so), and compute=in-place for it is refused with the reason.
run_mpi $np "${halo[@]}" --strategy pack=dtype,transport=isend-irecv,overlap=interior,step8 --json d.json \
  --outdir d >d.txt 2>&1 || fail "datatypes with overlap: $(tail -3 d.txt)"
json_is d.json '[(r["strategy"], r["parts"]["compute"], r["valid"]) for r in doc["results"]]
  == [("custom1", "one-pass", True), ("step8", "in-place", True)]'
grep -q "^  compute        : in-place: .* (except custom1 one-pass)$" d.txt || fail "header: $(grep compute d.txt)"
np=$np expect_error "pack=dtype with overlap=interior has MPI read and write the fields' planes while the compute shifts them" \
  --strategy pack=dtype,transport=isend-irecv,overlap=interior,compute=in-place
# one-pass everywhere when asked.
run_mpi $np "${halo[@]}" --strategy step2,step10,shm-window --compute one-pass --json o.json --outdir o >o.txt 2>&1 ||
  fail "one-pass run: $(tail -3 o.txt)"
json_is o.json '[(r["parts"]["compute"], r["valid"]) for r in doc["results"]] == [("one-pass", True)] * 3'
json_is o.json 'doc["config"]["compute"] == "one-pass"'


# partitioned needs MPI 4: named, it runs or is refused with the reason; by "all", it runs or is skipped.
if "$CHECKMPI_BIN/checkmpi-halo" --list-strategies | grep -q '^partitioned .*\[unavailable: needs MPI 4'; then
  np=$np expect_error "partitioned \(psend\) cannot run here: needs MPI 4 partitioned communication" \
    --strategy partitioned
else
  run_mpi $np "${halo[@]}" --strategy partitioned --json p.json --outdir p >p.txt 2>&1 || fail "partitioned: $(tail -3 p.txt)"
  json_is p.json 'doc["results"][0]["valid"] and doc["results"][0]["traits"]["messages"] == 6'
fi
echo "ok: parts"
