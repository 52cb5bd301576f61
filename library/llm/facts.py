"""What a user of a generated project waits for beyond the kernels: published figures for XRT launches, PCIe
transfers, the U55C's HBM and its platform shell, each with its source and the sentence it was read from.

Each :class:`Fact` is one number as its source states it, on the card it was measured on (``device``); where
the number here is our arithmetic on a quoted figure (a midpoint, bytes over a bandwidth, a sum of per-SLR
counts) ``derived`` says how.  No figure is tuned: a model that uses one prints it with :func:`report`.

    >>> from streamdsl.library.llm import facts
    >>> print(facts.XRT_LAUNCH_U55C)
    XRT kernel launch to completion, short kernel = 75 us (50 .. 100) on U55C (Vitis 2022.1) ...
"""
from __future__ import annotations

from dataclasses import dataclass

XRT = "https://github.com/Xilinx/XRT"
FINN_PLATFORMS = ("https://github.com/Xilinx/finn/blob/057e810d0f780ee2ec26c9702eef5bd858a8b23e/"
                  "src/finn/util/platforms.py")
UG1393_HBM = "https://docs.amd.com/r/2023.1-English/ug1393-vitis-application-acceleration/HBM-Configuration-and-Use"


@dataclass(frozen=True)
class Fact:
    """One published figure: ``value`` in ``unit`` (``low .. high`` when the source gives a range)."""

    what: str
    value: float
    unit: str
    device: str
    source: str  # a URL, with the thread or section
    quote: str  # the sentence the value was read from, as the source writes it
    low: float | None = None
    high: float | None = None
    derived: str = ""  # our arithmetic on the quoted figure, if any

    def __str__(self) -> str:
        span = f" ({_num(self.low)} .. {_num(self.high)})" if self.low is not None and self.high is not None else ""
        how = f"; {self.derived}" if self.derived else ""
        return (f"{self.what} = {_num(self.value)} {self.unit}{span} on {self.device}{how}  "
                f"[{self.source}: \"{self.quote}\"]")


def _num(v: float) -> str:
    return f"{v:,.0f}" if v == int(v) and abs(v) >= 1e4 else f"{v:g}"


# -- (a) XRT: launching a kernel and waiting for it ------------------------------------------------------------
XRT_LAUNCH_U55C = Fact(
    "XRT kernel launch to completion, short kernel", 75.0, "us", "U55C (Vitis 2022.1)",
    f"{XRT}/issues/8687 (large overhead for launching kernel, 2025-01-10)",
    "I am using the U55c board and vitis 2022.1,  I have found that the kernel launching latency is very large "
    "(50us~100us)", low=50.0, high=100.0, derived="75 us is the midpoint of the reported 50-100 us; the same post "
    "measures a 649 us kernel at 762 us through clGetEventProfilingInfo, 113 us more")
XRT_START_U25 = Fact(
    "XRT xrt::run construction + run::start", 16.0, "us", "Alveo U25 (XRT 2.12, 2021.2)",
    f"{XRT}/issues/6601 (xrt::run:wait long latency)",
    "[2] xrt::run::run + run::start = 16 us", low=16.0, high=56.0,
    derived="16 us once warm; the first of four runs took 56 us, the second 28 us")
XRT_WAIT_DONE_U25 = Fact(
    "XRT run::wait on a run that has already finished", 0.4, "us", "Alveo U25 (XRT 2.12, 2021.2)",
    f"{XRT}/issues/6601 (xrt::run:wait long latency)", "[2] xrt::run::wait = 0.4 us", low=0.4, high=55.0,
    derived="0.4 us when the run is done; 55 us for the first wait after one")
XRT_EMPTY_KERNEL_NPU = Fact(
    "XRT launch and wait of an empty kernel (a Ryzen AI NPU, not an Alveo card)", 45.0, "us", "AMD NPU (MLIR-AIE)",
    f"{XRT}/issues/9018 (Lower bound on kernel execution time)",
    "I created an \"empty\" kernel, doing nothing and moving no data. Using always XRT to call the kernel, I did the "
    "same computation to find the time for the kernel to run, and I found something like 45 microseconds.")

# -- (b) PCIe between host and card -----------------------------------------------------------------------------
PCIE_GEN3X16_PEAK = Fact(
    "PCIe Gen3 x16 host <-> card, approximate rate", 16.0, "GiB/s", "Alveo cards at Gen3 x16",
    "https://docs.amd.com/r/en-US/Vitis-Tutorials-Hardware-Acceleration/Alveo-Overview",
    "This link is capable of transferring approximately 16 GiB of data per second between the Alveo card and the "
    "host at Gen3x16, and higher rates for newer generations.")
PCIE_ALVEO_LINK = Fact(
    "Alveo host link (the U55C's platform xilinx_u55c_gen3x16_xdma_3 is Gen3 x16 with XDMA)", 16.0, "lanes",
    "Alveo cards", "https://docs.amd.com/r/2023.2-English/ug1393-vitis-application-acceleration/"
    "Using-Alveo-Accelerator-Cards",
    "Each Alveo card combines three essential things: a powerful FPGA for acceleration, high-bandwidth device memory "
    "banks, and connectivity to a host server via a high-bandwidth PCIe Gen3x16 link.")
PCIE_WRITE_LARGE = Fact(
    "host -> card DMA, large buffers (xbutil validate)", 9523.6, "MB/s", "U200, xilinx_u200_gen3x16_xdma_base_1",
    f"{XRT}/pull/5448 (CR-1081187)", "Host -> PCIe -> FPGA write bandwidth = 9523.6 MB/s",
    low=9302.8, high=11009.0, derived="9302.8 MB/s on another U200 (Vitis-Tutorials issue 281), 11009 MB/s on a U250 "
    "(XRT PR 937)")
PCIE_READ_LARGE = Fact(
    "card -> host DMA, large buffers (xbutil validate)", 11800.7, "MB/s", "U200, xilinx_u200_gen3x16_xdma_base_1",
    f"{XRT}/pull/5448 (CR-1081187)", "Host <- PCIe <- FPGA read bandwidth = 11800.7 MB/s",
    low=11800.7, high=12152.0, derived="12152 MB/s on a U250 (XRT PR 937)")
PCIE_WRITE_4KB = Fact(
    "host -> card DMA of a 4 KB buffer (xbutil validate)", 717.9, "MB/s", "U50, xilinx_u50_gen3x16_xdma_base_5",
    f"{XRT}/issues/6787 (DMA & mem-bw validation failed with Alveo U280)",
    "Buffer size - '4 KB' / Host -> PCIe -> FPGA write bandwidth = 717.9 MB/s", low=666.3, high=737.3,
    derived="4096 B / 717.9 MB/s = 5.7 us a 4 KB transfer; five runs 666.3-737.3 MB/s")
PCIE_READ_4KB = Fact(
    "card -> host DMA of a 4 KB buffer (xbutil validate)", 792.1, "MB/s", "U50, xilinx_u50_gen3x16_xdma_base_5",
    f"{XRT}/issues/6787 (DMA & mem-bw validation failed with Alveo U280)",
    "Host <- PCIe <- FPGA read bandwidth = 792.1 MB/s", low=767.7, high=864.9,
    derived="4096 B / 792.1 MB/s = 5.2 us a 4 KB transfer; five runs 767.7-864.9 MB/s")
BO_SYNC_SMALL = Fact(
    "xrt::bo::sync to the device of a small buffer, call to return", 19.0, "us", "Alveo U25 (XRT 2021.2)",
    f"{XRT}/issues/6590 (DMA transfer latency)", "# 2021.2 avg = 19 us", low=19.0, high=32.0,
    derived="32 us under 2022.2 before the reporter found a misconfiguration (both versions then alike); the same "
            "post measures an MMIO access at about 5 us")

# -- (c) the U55C's HBM and its shell ---------------------------------------------------------------------------
HBM_PC_PEAK = Fact(
    "HBM2 pseudo-channel, theoretical", 14.375, "GB/s", "U55C / U50 / U280 HBM subsystem", UG1393_HBM,
    "14.375 GB/s max theoretical bandwidth per PC")
HBM_TOTAL_PEAK = Fact(
    "HBM2 subsystem, 32 pseudo-channels, theoretical", 460.0, "GB/s", "U55C (16 GB, 512 MB a PC)", UG1393_HBM,
    "460 GB/s ( 32 × 14.375 GB/s) max theoretical bandwidth for the HBM subsystem")
HBM_MEASURED = Fact(
    "HBM2 bandwidth measured from the fabric (Shuhai)", 425.0, "GB/s", "U280 (the same two-stack HBM2 subsystem)",
    "https://doi.org/10.1109/FCCM48280.2020.00024 (Wang et al., Shuhai: Benchmarking High Bandwidth Memory on "
    "FPGAs, FCCM 2020)", "We observe that 1) HBM is able to provide up to 425 GB/s memory bandwidth",
    derived="425 / 32 = 13.3 GB/s a pseudo-channel, 92 % of the theoretical 14.375")
SHELL_SHARE = Fact(
    "share of each SLR the platform infrastructure may use", 10.0, "%", "Alveo platforms",
    "https://docs.amd.com/r/2022.2-English/ug1393-vitis-application-acceleration/"
    "Determining-Where-to-Place-the-Kernels",
    "Keep in mind when performing these calculation that 10% of the available resources can be used by system "
    "infrastructure")

U55C_DYNAMIC_SLRS = (  # LUT, FF, BRAM18K, URAM, DSP a design may use, per SLR (FINN, "observed from Vivado")
    (400800, 801600, 1200, 320, 2736),
    (382080, 764160, 1152, 320, 2880),
    (380640, 761280, 1152, 320, 2880),
)
U55C_DEVICE = (1303680, 2607360, 4032, 960, 9024)  # DS978: LUT, FF, BRAM18K, URAM, DSP
_DYN = tuple(sum(s[i] for s in U55C_DYNAMIC_SLRS) for i in range(5))
U55C_DYNAMIC_LUT = Fact(
    "U55C dynamic region, LUTs (the shell takes the rest of 1,303,680)", float(_DYN[0]), "LUT",
    "U55C (FINN's platform table)", FINN_PLATFORMS,
    "# observed from Vivado: return [[400800, 2 * 400800, 2 * 600, 320, 2736], [382080, 2 * 382080, 2 * 576, 320, "
    "2880], [380640, 2 * 380640, 2 * 576, 320, 2880]]",
    derived=f"sum over the three SLRs; the shell keeps {U55C_DEVICE[0] - _DYN[0]:,} LUT "
            f"({100 * (1 - _DYN[0] / U55C_DEVICE[0]):.1f} %), {U55C_DEVICE[4] - _DYN[4]} DSP, "
            f"{U55C_DEVICE[2] - _DYN[2]} BRAM18K, {U55C_DEVICE[3] - _DYN[3]} URAM.  FINN's U55C entry repeats its "
            "U280 entry number for number, so these are the U280 platform's counts carried over")
U280_UG1120_SLRS = Fact(
    "U280 dynamic region by UG1120 (as FINN quotes it), LUTs", 369000.0 + 333000.0 + 367000.0, "LUT",
    "U280 (the U55C's device class, another platform)", FINN_PLATFORMS,
    "# according to UG1120 # return [[369000, 746000, 2*507, 320, 2733], [333000, 675000, 2*468, 320, 2877], "
    "[367000, 729000, 2*512, 320, 2880]]",
    derived="sum over the three SLRs: 1,069,000 LUT (82 % of the device), 8,490 DSP, 2,974 BRAM18K, 960 URAM")

FACTS: tuple[Fact, ...] = (
    XRT_LAUNCH_U55C, XRT_START_U25, XRT_WAIT_DONE_U25, XRT_EMPTY_KERNEL_NPU,
    PCIE_GEN3X16_PEAK, PCIE_ALVEO_LINK, PCIE_WRITE_LARGE, PCIE_READ_LARGE, PCIE_WRITE_4KB, PCIE_READ_4KB,
    BO_SYNC_SMALL,
    HBM_PC_PEAK, HBM_TOTAL_PEAK, HBM_MEASURED, SHELL_SHARE, U55C_DYNAMIC_LUT, U280_UG1120_SLRS,
)


def u55c_dynamic_region() -> dict[str, int]:
    """What a design may use on the U55C by FINN's per-SLR table (see :data:`U55C_DYNAMIC_LUT` for its caveat)."""
    return dict(zip(("lut", "ff", "bram", "uram", "dsp"), _DYN))


def report() -> str:
    """Every fact, a line each."""
    return "\n".join(str(f) for f in FACTS)
