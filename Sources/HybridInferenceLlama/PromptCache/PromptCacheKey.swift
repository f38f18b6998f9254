internal import CHybridOS
import CLlama
import Foundation
import HybridInferenceCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Everything a saved sequence state depends on besides its tokens, hashed:
/// a state is loaded only into a context whose key is the same.
///
/// - The model file: its path, size and modification time (to the
///   nanosecond), and a checksum of its first MiB (the GGUF header and
///   vocabulary), so a file replaced by another of the same size and time,
///   or the same path on another machine sharing the directory, does not match.
/// - The llama.cpp build: its system-info line and the size and time of the
///   library file that holds `llama_decode` (found with `dladdr`), since the
///   state's layout and numerics are the build's.
/// - Where the model's layers are (`OffloadDecision`: the device and how
///   many layers): a GPU computes the same cells with other kernels, so a
///   state saved on one backend is not loaded into another.
/// - The context's KV cache types and flash-attention setting, which change
///   what the cells hold. (A context that switches setting at a crossing
///   looks up both of its settings' keys, rewriting the other's states:
///   `BatchedContext.savedPrefix`.)
struct PromptCacheKey: Sendable, Equatable {
  let hash: UInt64

  init(
    model: ModelFingerprint, offload: OffloadDecision, typeK: ggml_type, typeV: ggml_type,
    flashAttention: llama_flash_attn_type
  ) {
    let text = [
      "format \(PromptCacheFile.version)", "model \(model.description)", "build \(Self.build)",
      "offload \(offload.cacheKeyText)", "kv \(typeK.rawValue) \(typeV.rawValue)", "flash \(flashAttention.rawValue)",
    ].joined(separator: "\n")
    hash = Checksum64.of(Array(text.utf8))
  }

  /// The key of a context made from `llama_context_default_params()`'s KV
  /// types and the decided attention setting, as `BatchedContext.makeContext`
  /// makes them.
  init(model: ModelFingerprint, offload: OffloadDecision, flashAttention: llama_flash_attn_type) {
    let params = llama_context_default_params()
    self.init(
      model: model, offload: offload, typeK: params.type_k, typeV: params.type_v, flashAttention: flashAttention)
  }

  /// The linked llama.cpp, read once (also in `AttentionCalibrationStore.Key`).
  static let build: String = {
    let info = llama_print_system_info().map { String(cString: $0) } ?? ""
    var library = "unknown"
    let symbol: @convention(c) (OpaquePointer?, llama_batch) -> Int32 = llama_decode
    if let path = loadedFile(containing: unsafeBitCast(symbol, to: UnsafeRawPointer.self)),
      let identity = FileIdentity.of(path: path)
    {
      library = "\(path) \(identity.size) \(identity.modified.seconds).\(identity.modified.nanoseconds)"
    }
    return "\(info) | \(library)"
  }()

  /// The loaded file that holds `address` (the shared library, or the
  /// executable when llama.cpp is linked in), as `dladdr` names it; nil
  /// when none can be named. glibc names the executable by its `argv[0]`
  /// (relative, or a bare name), and a static executable has no loader to
  /// ask: the kernel's link to the executable names it whole.
  private static func loadedFile(containing address: UnsafeRawPointer) -> String? {
    let path = CHybridOS_loaded_file(address).map { String(cString: $0) }
    if let path, path.hasPrefix("/") { return path }
    return try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
  }
}

/// Which model file a context's states were made with.
struct ModelFingerprint: Sendable, Equatable, CustomStringConvertible {
  var path: String
  var identity: FileIdentity
  /// Checksum of the file's first MiB.
  var headerChecksum: UInt64

  /// Reads the first MiB of the open file `descriptor`, whose identity was checked.
  init(path: String, identity: FileIdentity, descriptor: Int32) {
    self.path = path
    self.identity = identity
    var head = [UInt8](repeating: 0, count: min(identity.size, 1 << 20))
    let read = head.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
    headerChecksum = Checksum64.of(head.prefix(max(0, read)))
  }

  var description: String {
    "\(path) \(identity.size) \(identity.modified.seconds).\(identity.modified.nanoseconds) \(headerChecksum)"
  }
}

extension PromptCacheKey {
  /// The key hash for a state whose tokens hold `images`: `hash` itself
  /// without images, else `hash` with each image's id and place, so that two
  /// prompts whose tokens differ only in their images (every image position
  /// holds the same placeholder token) never share a state. Nil when an
  /// image has no id: such a state is not saved.
  static func hash(_ hash: UInt64, images: [MediaLayout.Image]) -> UInt64? {
    guard !images.isEmpty else { return hash }
    var lines = ["key \(hash)"]
    for image in images {
      guard let id = image.id else { return nil }
      lines.append("image \(image.start) \(image.count) \(id)")
    }
    return Checksum64.of(Array(lines.joined(separator: "\n").utf8))
  }
}
