internal import CHybridOS
import CLlama
import Foundation

/// ggml's backends as modules loaded at run time, for a llama.cpp built with
/// `GGML_BACKEND_DL` (scripts/setup-llama.sh's `LLAMA_GPU=vulkan`, and
/// distributions that package each backend apart).
///
/// Such a build links no backend: its registry is empty until the modules
/// (`libggml-cpu.so`, `libggml-vulkan.so`, ...) are loaded, and a model
/// cannot load on an empty registry. `llama_backend_init` loads them from the
/// directory built into libggml (`GGML_BACKEND_DIR`), the executable's and
/// the working directory. A build that was given no such directory installs
/// its modules beside libggml or in the prefix's `bin`, where neither of the
/// others is for an app linked to it: those two are searched too, once, when
/// the registry is still empty after `llama_backend_init`. A build with its
/// backends linked in has a registry from the start and is left alone.
enum BackendModules {
  /// Loads the modules from libggml's own directory, then its prefix's
  /// `bin`, while the registry is empty; returns where they came from (nil
  /// when the registry was not empty, or nothing could be loaded).
  static func loadIfNone() -> String? {
    guard ggml_backend_reg_count() == 0, let library = libggmlDirectory() else { return nil }
    let candidates = [
      library, URL(fileURLWithPath: library).deletingLastPathComponent().appendingPathComponent("bin").path,
    ]
    for directory in candidates where FileManager.default.fileExists(atPath: directory) {
      ggml_backend_load_all_from_path(directory)
      if ggml_backend_reg_count() > 0 { return directory }
    }
    return nil
  }

  /// The names of the registered backends (`CPU`, `Vulkan`, ...), in the registry's order.
  static func registered() -> [String] {
    (0..<ggml_backend_reg_count()).compactMap { index in
      ggml_backend_reg_get(index).flatMap { ggml_backend_reg_name($0) }.map { String(cString: $0) }
    }
  }

  /// The directory of the loaded libggml, as the dynamic loader names it;
  /// nil when it names none (ggml linked into the executable).
  private static func libggmlDirectory() -> String? {
    let symbol: @convention(c) (UnsafePointer<CChar>?) -> Void = ggml_backend_load_all_from_path
    guard
      let path = CHybridOS_loaded_file(unsafeBitCast(symbol, to: UnsafeRawPointer.self)).map({ String(cString: $0) }),
      path.hasPrefix("/")
    else { return nil }
    return URL(fileURLWithPath: path).deletingLastPathComponent().path
  }
}
