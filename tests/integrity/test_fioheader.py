"""The parser of fio's verify header against blocks written by real fio (verify=crc32c, 8k
interval, 8k and 32k writes over a sequential prefill): every block fio wrote passes, each
kind of damage is named, and a block read torn while fio writes is read again."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from assay.integrity import checksum, fioheader
from assay.integrity.fioheader import Fault, check, check_many, crc32c
from assay.integrity.fiojobs import HeadedFile

pytestmark = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")

BS = 8192
SIZE = 1 << 20

JOB = """[global]
ioengine=psync
directory={dir}
filename=f.dat
size={size}
verify=crc32c
verify_interval={bs}
do_verify=0
verify_state_save=0
buffer_compress_percentage=50
refill_buffers
[prefill]
rw=write
bs=1m
[load]
stonewall
rw=randrw
bssplit=8k/50:32k/50
number_ios=400
"""


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    d = tmp_path_factory.mktemp("fio")
    (d / "j.fio").write_text(JOB.format(dir=d, size=SIZE, bs=BS))
    subprocess.run(["fio", str(d / "j.fio"), "--output-format=json"], check=True,
                   capture_output=True, cwd=d)
    assert not list(d.glob("*verify.state")), "fio kept verify state files"
    return (d / "f.dat").read_bytes()


def block(data: bytes, i: int) -> bytearray:
    return bytearray(data[i * BS:(i + 1) * BS])


def test_every_block_real_fio_wrote_passes(written: bytes) -> None:
    n = SIZE // BS
    assert check_many(memoryview(written), BS, 0, n) == []
    assert all(check(memoryview(written)[i * BS:(i + 1) * BS], BS, i * BS) is None
               for i in range(n))
    magic, kind, length, _, offset = struct.unpack_from("<HHIQQ", written, 5 * BS)
    assert (magic, kind, length, offset) == (0xACCA, 5, BS, 5 * BS)
    # both fio jobs wrote: the load's job number is in some headers, the prefill's in others
    threads = {struct.unpack_from("<H", written, i * BS + 32)[0] for i in range(n)}
    assert threads == {1, 2}


def test_fio_crc32c_is_castagnoli_without_the_final_inversion() -> None:
    assert crc32c(b"123456789") == 0xE3069283 ^ 0xFFFFFFFF


@pytest.mark.parametrize(("at", "fault"), [
    (0, Fault.NO_HEADER),  # the magic
    (2, Fault.NO_HEADER),  # the verify type
    (12, Fault.BAD_HEADER),  # the seed, under the header's own CRC
    (17, Fault.BAD_HEADER),  # the offset
    (37, Fault.BAD_HEADER),  # the header's CRC itself
    (41, Fault.BAD_DATA),  # the data's CRC
    (44, Fault.BAD_DATA),  # the first data byte
    (BS - 1, Fault.BAD_DATA),  # the last one
])
def test_one_flipped_byte_is_a_named_fault(written: bytes, at: int, fault: Fault) -> None:
    b = block(written, 7)
    b[at] ^= 0x01
    assert check(memoryview(b), BS, 7 * BS) is fault
    many = bytearray(written[:16 * BS])
    many[7 * BS + at] ^= 0x01
    assert check_many(memoryview(many), BS, 0, 16) == [7]


def test_a_whole_block_in_the_wrong_place_or_zeros(written: bytes) -> None:
    assert check(memoryview(block(written, 3)), BS, 9 * BS) is Fault.MISPLACED
    assert check(memoryview(block(written, 3)), BS // 2, 3 * BS) is Fault.MISPLACED
    assert check(memoryview(bytearray(BS)), BS, 0) is Fault.NO_HEADER
    assert fioheader.SIZE == 44


def test_a_block_caught_half_written_during_the_load_is_read_again(
        written: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read that races one of fio's writes sees a torn block once; read again it is whole.
    Real damage stays and counts, live or not."""
    path = tmp_path / "f.dat"
    path.write_bytes(written)
    headed = HeadedFile("db", "f.dat", SIZE, BS)
    real = checksum.read_blocks
    reads = []

    def torn_once(fd: int, mv: memoryview, n: int, bs: int, pos: int) -> set[int]:
        bad = real(fd, mv, n, bs, pos)
        reads.append(pos)
        if len(reads) == 1:
            mv[3 * BS + 100] ^= 0xFF  # the first read of the file catches block 3 torn
        return bad

    monkeypatch.setattr(checksum, "read_blocks", torn_once)
    for live, corrupt in ((True, 0), (False, 1)):
        reads.clear()
        r = checksum.WorkloadChecksums("db")
        assert checksum.check_file(headed, path, r, live=live)
        assert (r.checked, r.corrupt) == (SIZE // BS, corrupt)
    with open(path, "r+b") as f:  # damage on disk
        f.seek(5 * BS + 100)
        f.write(b"\0")
    reads.clear()
    r = checksum.WorkloadChecksums("db")
    assert checksum.check_file(headed, path, r, live=True)
    assert r.corrupt == 1 and r.offsets == [{"file": "f.dat", "offset": 5 * BS,
                                             "state": "corrupt", "fault": "data checksum"}]
