import CLlama
import HybridInferenceCore
import HybridInferenceJinja

/// What the linked llama.cpp was compiled for, from `llama_print_system_info()`.
///
/// The library may be linked to a llama.cpp it did not build (a distribution
/// package, Homebrew), so run-time decisions read the build's own report
/// rather than assume this repository's set-up made it.
struct LlamaBuildInfo: Sendable, Equatable {
  /// The CPU features reported as `NAME = 1`.
  let cpuFeatures: [String]

  /// Parses the report: "CPU : SSE3 = 1 | AVX2 = 1 | … | REPACK = 1 |".
  init(systemInfo: String) {
    cpuFeatures = systemInfo.split(separator: "|").compactMap { field in
      let pair = field.split(separator: "=").map { $0.trimmingCharacters(in: .whitespaces) }
      guard pair.count == 2, pair[1] == "1" else { return nil }
      return pair[0].split(separator: ":").last.map { $0.trimmingCharacters(in: .whitespaces) }
    }
  }

  /// The linked library's report, read once.
  static let current = LlamaBuildInfo(systemInfo: llama_print_system_info().map { String(cString: $0) } ?? "")

  /// The linked llama.cpp's own version (`llama_version()`: its CMake
  /// project version), for messages that name the llama.cpp a rule is about.
  /// Which copy the set-up builds is pinned in scripts/common.sh alone.
  static let linkedVersion = llama_version().map { String(cString: $0) } ?? "(unknown version)"

  /// Whether ggml's AMX matrix kernels are compiled in.
  var hasAMXKernels: Bool { cpuFeatures.contains("AMX_INT8") }
}

/// The run-time guard against ggml's AMX path.
///
/// The pinned llama.cpp's AMX kernels (`tinygemm_kernel_amx`, reached through
/// the AMX "extra" buffer type that repacks weights at load) die with SIGILL on
/// Sapphire/Emerald Rapids hosts, even with tile permission granted: upstream's
/// open fix (llama.cpp PR 26954) keeps the tile configuration in .rodata
/// because the compiler drops the one on the stack. Our set-up builds without
/// AMX; this guard protects an app linked to any other build. When the build
/// has AMX kernels and the host exposes AMX, the model is loaded without extra
/// buffer types, which also gives up the CPU repack of Q4_0/IQ4_NL weights on
/// those hosts only: a speed loss on some quantisations, never a crash.
enum AMXGuard {
  /// Whether the model must be loaded with `use_extra_bufts = false`.
  static func disablesExtraBufferTypes(cpu: CPUFeatures, build: LlamaBuildInfo) -> Bool {
    cpu.hasAMX && build.hasAMXKernels
  }
}
