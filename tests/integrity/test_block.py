"""The block format: what each kind of damage is classified as."""

from __future__ import annotations

from assay.integrity.block import HEADER, State, classify, fill, generation_of

BS = 4096
WRITER = 42


def block(offset: int = 8192, generation: int = 5, writer: int = WRITER) -> bytearray:
    buf = bytearray(BS)
    fill(memoryview(buf), 0, BS, offset, generation, writer)
    return buf


def state(buf: bytearray, offset: int = 8192, expected: int = 5) -> State:
    return classify(memoryview(buf), 0, BS, offset, expected, WRITER)


def test_a_whole_block_of_the_acknowledged_generation_or_newer_is_ok() -> None:
    assert state(block()) is State.OK
    assert state(block(generation=9)) is State.OK  # written after the journal's last record
    assert generation_of(memoryview(block(generation=9)), 0) == 9


def test_an_older_generation_is_stale() -> None:
    assert state(block(generation=4)) is State.STALE


def test_a_flipped_bit_anywhere_is_corrupt() -> None:
    for at in (0, 9, HEADER.size, BS // 2, BS - 1):
        b = block()
        b[at] ^= 0x01
        assert state(b) is State.CORRUPT, at


def test_a_valid_block_at_the_wrong_place_or_from_another_writer_is_corrupt() -> None:
    assert state(block(offset=0)) is State.CORRUPT  # a misdirected write
    assert state(block(writer=WRITER + 1)) is State.CORRUPT


def test_no_block_of_ours_where_one_was_acknowledged_is_lost() -> None:
    assert state(bytearray(BS)) is State.LOST
    assert state(bytearray(b"\xff" * BS)) is State.LOST
    assert state(bytearray(BS), expected=0) is State.OK  # nothing was promised there


def test_payloads_are_random_so_storage_cannot_deduplicate_them() -> None:
    assert block()[HEADER.size:-4] != block()[HEADER.size:-4]
