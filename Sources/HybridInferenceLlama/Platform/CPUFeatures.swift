import Foundation
import HybridInferenceCore
import HybridInferenceJinja

/// What the host CPU offers, as the kernel reports it in `/proc/cpuinfo`.
///
/// A value built from text, so the decisions that depend on it (which compiled
/// features the host lacks, whether ggml's AMX path may run) can be tested
/// with the cpuinfo of machines we do not have.
struct CPUFeatures: Sendable, Equatable {
  /// The feature flags: `flags` on x86, `Features` on arm64.
  let flags: Set<String>
  /// `model name` (x86) or the CPU part (arm64), for reports; nil when absent.
  let modelName: String?

  /// Parses cpuinfo text. Only the first processor block matters: every core
  /// of one machine reports the same flags.
  init(cpuinfo: String) {
    var flags: Set<String> = []
    var modelName: String?
    for line in cpuinfo.split(separator: "\n", omittingEmptySubsequences: false) {
      if line.trimmingCharacters(in: .whitespaces).isEmpty, !flags.isEmpty { break }
      let parts = line.split(separator: ":", maxSplits: 1)
      guard parts.count == 2 else { continue }
      let key = parts[0].trimmingCharacters(in: .whitespaces)
      let value = parts[1].trimmingCharacters(in: .whitespaces)
      switch key {
      case "flags", "Features": flags.formUnion(value.split(separator: " ").map(String.init))
      case "model name", "Model": modelName = modelName ?? value
      default: break
      }
    }
    self.flags = flags
    self.modelName = modelName
  }

  /// This machine's, read once: the CPU does not change while the process runs.
  static let current = CPUFeatures(
    cpuinfo: KernelFile.read("/proc/cpuinfo") ?? "")

  /// Whether the kernel exposes Intel AMX (Sapphire Rapids and later).
  var hasAMX: Bool { flags.contains("amx_tile") || flags.contains("amx_int8") }

  /// llama.cpp's names for the features a build can be compiled for, mapped to
  /// the flag that says the host has them. Features missing here (AMX, which
  /// ggml enables only after asking the kernel at run time; SVE_CNT and other
  /// values that are not instruction sets) never make a host ineligible.
  private static let hostFlag: [String: String] = [
    // x86-64
    "SSE3": "pni", "SSSE3": "ssse3", "AVX": "avx", "AVX2": "avx2", "F16C": "f16c",
    "FMA": "fma", "BMI2": "bmi2", "AVX512": "avx512f", "AVX512_VBMI": "avx512vbmi",
    "AVX512_VNNI": "avx512_vnni", "AVX512_BF16": "avx512_bf16", "AVX_VNNI": "avx_vnni",
    // arm64
    "NEON": "asimd", "FP16_VA": "asimdhp", "DOTPROD": "asimddp", "MATMUL_INT8": "i8mm",
    "SVE": "sve", "SVE2": "sve2", "SME": "sme",
  ]

  /// The compiled features this CPU lacks: each would be an illegal
  /// instruction. Empty when the host runs the build, or when the kernel gave
  /// no flags to compare against (another OS): then nothing is claimed.
  func missing(compiled: [String]) -> [String] {
    guard !flags.isEmpty else { return [] }
    return compiled.filter { feature in Self.hostFlag[feature].map { !flags.contains($0) } ?? false }
  }
}
