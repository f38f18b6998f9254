import CLlama
import Foundation

/// Whether this machine can run the llama.cpp build the library is linked to.
///
/// A build made with native CPU optimisations uses instructions (AVX2, FMA, …)
/// that an older CPU lacks, and would crash with SIGILL on it. llama.cpp reports
/// the features it was compiled for; each must be in the CPU's own flags.
enum DeviceEligibility {
  /// llama.cpp's compiled CPU features, mapped to `/proc/cpuinfo` flag names.
  private static let cpuinfoFlag: [String: String] = [
    "SSE3": "pni", "SSSE3": "ssse3", "AVX": "avx", "AVX2": "avx2", "F16C": "f16c",
    "FMA": "fma", "BMI2": "bmi2", "AVX512": "avx512f", "AVX512_VBMI": "avx512vbmi",
    "AVX512_VNNI": "avx512_vnni", "AVX512_BF16": "avx512_bf16", "AVX_VNNI": "avx_vnni",
    "AMX_INT8": "amx_int8",
  ]

  /// The compiled features this CPU lacks; empty when it can run the build.
  /// Computed once: neither the build nor the CPU changes while the process runs.
  static let missingCPUFeatures: [String] = {
    guard let cpuinfo = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
      let flagsLine = cpuinfo.split(separator: "\n").first(where: { $0.hasPrefix("flags") })
    else { return [] }  // not Linux on x86: nothing to compare against
    let flags = Set(flagsLine.split(separator: ":").last?.split(separator: " ").map(String.init) ?? [])
    return compiledCPUFeatures().filter { feature in
      cpuinfoFlag[feature].map { !flags.contains($0) } ?? false
    }
  }()

  /// Parses `llama_print_system_info()`: "CPU : SSE3 = 1 | AVX2 = 1 | …".
  static func compiledCPUFeatures() -> [String] {
    guard let info = llama_print_system_info() else { return [] }
    return String(cString: info).split(separator: "|").compactMap { field in
      let pair = field.split(separator: "=").map { $0.trimmingCharacters(in: .whitespaces) }
      guard pair.count == 2, pair[1] == "1" else { return nil }
      return pair[0].split(separator: ":").last.map { $0.trimmingCharacters(in: .whitespaces) }
    }
  }

  /// Memory the kernel could give this process now, from `MemAvailable`.
  static func availableMemory() -> Int? {
    guard let meminfo = try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8) else {
      return nil
    }
    for line in meminfo.split(separator: "\n") where line.hasPrefix("MemAvailable:") {
      let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
      return kilobytes.map { $0 * 1024 }
    }
    return nil
  }
}
