import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// The CPU decisions, on the /proc/cpuinfo text of machines this project runs on
/// (and some it does not): which compiled features a host lacks, and when the
/// AMX guard turns llama.cpp's extra buffer types off.
final class CPUFeaturesTests: XCTestCase {
  private static let emeraldRapids = """
    processor\t: 0
    vendor_id\t: GenuineIntel
    model name\t: INTEL(R) XEON(R) PLATINUM 8581C CPU @ 2.10GHz
    flags\t\t: fpu sse sse2 pni ssse3 fma avx f16c avx2 bmi2 avx512f avx512vbmi avx512_vnni \
    avx512_bf16 avx_vnni amx_bf16 amx_tile amx_int8

    processor\t: 1
    vendor_id\t: GenuineIntel
    flags\t\t: fpu
    """
  private static let emeraldRapidsUnderKVMWithoutAMX = """
    model name\t: Intel(R) Xeon(R) Processor
    flags\t\t: fpu sse sse2 pni ssse3 fma avx f16c avx2 bmi2 avx512f avx512vbmi avx512_vnni avx512_bf16 avx_vnni
    """
  private static let epyc = """
    vendor_id\t: AuthenticAMD
    model name\t: AMD EPYC 7B13 64-Core Processor
    flags\t\t: fpu sse sse2 pni ssse3 fma avx f16c avx2 bmi2
    """
  private static let graviton = """
    processor\t: 0
    BogoMIPS\t: 243.75
    Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm \
    lrcpc dcpop sha3 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm ssbs paca pacg dcpodp svei8mm \
    i8mm bf16 dgh rng
    CPU part\t: 0xd40
    """

  private let nativeSapphireRapidsBuild = LlamaBuildInfo(
    systemInfo: "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | "
      + "AVX512 = 1 | AVX512_VBMI = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 | AMX_INT8 = 1 | "
      + "OPENMP = 1 | REPACK = 1 | ")
  private let ourBuildOnSapphireRapids = LlamaBuildInfo(
    systemInfo: "CPU : SSE3 = 1 | AVX2 = 1 | AVX512 = 1 | AVX512_VNNI = 1 | OPENMP = 1 | REPACK = 1 | ")
  private let zen3Build = LlamaBuildInfo(systemInfo: "CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | FMA = 1 | REPACK = 1 |")
  private let armBuild = LlamaBuildInfo(
    systemInfo: "CPU : NEON = 1 | ARM_FMA = 1 | FP16_VA = 1 | MATMUL_INT8 = 1 | SVE = 1 | DOTPROD = 1 | SVE_CNT = 32 |")

  func testParsesTheFirstProcessorOnly() {
    let cpu = CPUFeatures(cpuinfo: Self.emeraldRapids)
    XCTAssertEqual(cpu.modelName, "INTEL(R) XEON(R) PLATINUM 8581C CPU @ 2.10GHz")
    XCTAssertTrue(cpu.flags.contains("amx_int8"))
    XCTAssertTrue(cpu.hasAMX)
  }

  func testAMXHostWithAMXBuildLoadsWithoutExtraBufferTypes() {
    let cpu = CPUFeatures(cpuinfo: Self.emeraldRapids)
    XCTAssertTrue(AMXGuard.disablesExtraBufferTypes(cpu: cpu, build: nativeSapphireRapidsBuild))
    XCTAssertEqual(cpu.missing(compiled: nativeSapphireRapidsBuild.cpuFeatures), [])
  }

  func testAMXHostWithABuildWithoutAMXKeepsExtraBufferTypes() {
    let cpu = CPUFeatures(cpuinfo: Self.emeraldRapids)
    XCTAssertFalse(AMXGuard.disablesExtraBufferTypes(cpu: cpu, build: ourBuildOnSapphireRapids))
  }

  func testAMXBuildOnAHostWithoutAMXIsEligibleAndUnguarded() {
    // ggml asks the kernel for AMX before it uses it, so AMX is never a reason
    // to call a host ineligible; and with no AMX exposed its path never runs.
    let cpu = CPUFeatures(cpuinfo: Self.emeraldRapidsUnderKVMWithoutAMX)
    XCTAssertFalse(cpu.hasAMX)
    XCTAssertFalse(AMXGuard.disablesExtraBufferTypes(cpu: cpu, build: nativeSapphireRapidsBuild))
    XCTAssertEqual(cpu.missing(compiled: nativeSapphireRapidsBuild.cpuFeatures), [])
  }

  func testAMDHostLacksTheAVX512OfAnIntelBuild() {
    let cpu = CPUFeatures(cpuinfo: Self.epyc)
    XCTAssertFalse(cpu.hasAMX)
    XCTAssertEqual(
      cpu.missing(compiled: nativeSapphireRapidsBuild.cpuFeatures),
      ["AVX512", "AVX512_VBMI", "AVX512_VNNI", "AVX512_BF16"])
    XCTAssertEqual(cpu.missing(compiled: zen3Build.cpuFeatures), [])
    XCTAssertFalse(AMXGuard.disablesExtraBufferTypes(cpu: cpu, build: nativeSapphireRapidsBuild))
  }

  func testArm64ReadsTheFeaturesLine() {
    let cpu = CPUFeatures(cpuinfo: Self.graviton)
    XCTAssertFalse(cpu.hasAMX)
    XCTAssertEqual(cpu.missing(compiled: armBuild.cpuFeatures), [])
    let withoutSVE = CPUFeatures(cpuinfo: Self.graviton.replacingOccurrences(of: " sve ", with: " "))
    XCTAssertEqual(withoutSVE.missing(compiled: armBuild.cpuFeatures), ["SVE"])
    XCTAssertFalse(AMXGuard.disablesExtraBufferTypes(cpu: cpu, build: armBuild))
  }

  func testNoCPUInfoClaimsNothing() {
    let cpu = CPUFeatures(cpuinfo: "")
    XCTAssertEqual(cpu.missing(compiled: nativeSapphireRapidsBuild.cpuFeatures), [])
    XCTAssertFalse(AMXGuard.disablesExtraBufferTypes(cpu: cpu, build: nativeSapphireRapidsBuild))
  }

  func testBuildReportParsing() {
    XCTAssertEqual(zen3Build.cpuFeatures, ["SSE3", "AVX", "AVX2", "FMA", "REPACK"])
    XCTAssertTrue(nativeSapphireRapidsBuild.hasAMXKernels)
    XCTAssertFalse(armBuild.cpuFeatures.contains("SVE_CNT"))
  }

  func testCGroupLimits() {
    XCTAssertEqual(CGroupMemory(max: "1073741824\n", current: "73741824\n")?.headroom, 1_000_000_000)
    XCTAssertNil(CGroupMemory(max: "max\n", current: "5"))
    XCTAssertNil(CGroupMemory(max: "9223372036854771712", current: "5"))
    XCTAssertEqual(CGroupMemory(max: "100", current: "200")?.headroom, 0)
  }

  /// The machine this suite runs on, printed beside every run's figures.
  func testThisHostIsEligibleForTheLinkedBuild() {
    print("CPU: \(CPUFeatures.current.modelName ?? "unknown"), AMX exposed: \(CPUFeatures.current.hasAMX)")
    print("llama.cpp build: \(LlamaBuildInfo.current.cpuFeatures.joined(separator: " "))")
    XCTAssertEqual(DeviceEligibility.missingCPUFeatures, [])
  }
}
