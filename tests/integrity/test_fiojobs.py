"""In integrity mode the workloads' own writes, and the prefill of their files, carry fio's
verify headers on one grid per file, with no verify pass and no state in fio; reads and
workloads out of integrity mode are untouched."""

from __future__ import annotations

from assay.fio.jobfile import FioJob
from assay.integrity.fiojobs import apply, block_sizes, headed_files
from assay.plan import Plan, plan_text
from assay.plan.model import prefill_jobs
from assay.workloads.base import DataFile, Stream

TEXT = """name: t
{top}workloads:
  db: {{kind: oltp, data_iops: 100, log_iops: 10, dataset: 32MiB{db}}}
  bulk: {{kind: oltp, dataset: 16MiB, load: {{model: closed, threads: 1}}, verify: {bulk}}}
timeline: {{duration: 5s}}
"""


def plan(top: str = "integrity: on\n", db: str = "", bulk: str = "true") -> Plan:
    return plan_text(TEXT.format(top=top, db=db, bulk=bulk), "s.yaml")


def test_writing_jobs_and_their_prefill_carry_headers_and_reads_do_not() -> None:
    p = plan()
    writes = [j for j in p.jobs.values() if "write" in str(j.options["rw"])]
    reads = [j for j in p.jobs.values() if j.options["rw"] == "randread"]
    assert writes and reads
    for j in writes:
        assert j.options["verify"] == "crc32c" and j.options["do_verify"] == 0
        assert j.options["verify_state_save"] == 0 and "verify_backlog" not in j.options
    assert all("verify" not in j.options for j in reads)  # fio would check them and stop
    grid = {f.name: f.interval for f in headed_files(p.streams)}
    # 8k and 32k data writes share an 8k grid; the 32k log writes a 32k one; a closed-loop
    # randrw job of 8k/32k (bulk) an 8k one
    assert grid["db.data.1.dat"] == 8192 and grid["db.log.1.dat"] == 32768
    assert grid["bulk.data.1.dat"] == 8192
    assert len(grid) == len(p.files)
    for job in prefill_jobs(p):  # the prefill writes the same grid: no block without a header
        name = str(job.options["filename"])
        assert job.options["verify"] == "crc32c" and job.options["verify_interval"] == grid[name]
    text = p.jobfile("local", "run.fio")
    assert "verify=crc32c" in text and "do_verify=0" in text


def test_out_of_integrity_mode_nothing_changes() -> None:
    p = plan(top="", bulk="false")
    assert headed_files(p.streams) == []
    assert "verify" not in p.jobfile("local", "run.fio")
    assert "verify" not in p.jobfile("local", "prefill.fio")
    one = plan(bulk="false")  # only db is in integrity mode
    assert {f.workload for f in headed_files(one.streams)} == {"db"}
    assert all("verify" not in j.options for j in one.jobs.values() if j.name.startswith("bulk"))


def test_writes_that_fall_on_no_grid_get_no_headers_and_a_note() -> None:
    def stream(*jobs: dict[str, object]) -> Stream:
        return Stream("w", "s", [DataFile("w.dat", 1 << 20)],
                      [FioJob(f"j{i}", {"filename": "w.dat", **o})  # type: ignore[dict-item]
                       for i, o in enumerate(jobs)], [])

    odd = stream({"rw": "randwrite", "bs": "8k"}, {"rw": "write", "bs": "1000"})
    notes = apply([odd], ["w"], {"w": "oltp"})
    assert notes and "w.dat" in notes[0] and headed_files([odd]) == []
    user = stream({"rw": "randwrite", "bs": "4k"})
    assert apply([user], ["w"], {"w": "fio"}) and headed_files([user]) == []
    # a 24k grid does not divide the prefill's 1 MiB writes: fio would put its headers elsewhere
    odd_grid = stream({"rw": "randwrite", "bs": "24k"}, {"rw": "write", "bs": "48k"})
    assert apply([odd_grid], ["w"], {"w": "oltp"}) and headed_files([odd_grid]) == []
    mixed = stream({"rw": "randwrite", "bs": "12k"}, {"rw": "write", "bssplit": "4k/50:64k/50"})
    assert apply([mixed], ["w"], {"w": "oltp"}) == []
    assert [f.interval for f in headed_files([mixed])] == [4096]
    assert block_sizes({"bssplit": "4k/50,8k/50"}) is None  # per-direction splits: not ours
    assert block_sizes({"bs": "1m"}) == [1 << 20] and block_sizes({}) == [4096]
    # a region that starts on the grid keeps it (VDI's writes at 4/5 of each file)
    assert block_sizes({"bs": "32k", "offset": 3 << 20}) == [32768, 3 << 20]
    assert block_sizes({"bs": "32k", "offset": "10%"}) is None


def test_the_workloads_data_pattern_stays_with_headers() -> None:
    p = plan(db=", data: {compressibility: 2.0}")
    job = next(j for j in p.jobs.values() if j.name.startswith("db.data.1.write"))
    # the data pattern stays (fio 3.33 fills verify buffers at buffer_compress_percentage)
    assert job.options["buffer_compress_percentage"] == 50 and job.options["verify"] == "crc32c"
    deduped = plan(db=", data: {dedupe: 2.0}")  # fio leaves dedupe out of verify buffers
    assert any("not dedupe" in n and "db's data" in n for n in deduped.notes)
    assert not any("dedupe" in n for n in p.notes)
