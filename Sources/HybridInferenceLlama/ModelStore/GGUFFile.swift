import CLlama
import HybridInferenceCore
import HybridInferenceJinja

/// What the library needs to know about a GGUF file before llama.cpp sees it.
///
/// llama.cpp aborts the whole process on some malformed files, which no Swift
/// error handling can catch. So every file is read here first: the header, the
/// metadata and the tensor table are checked against the file's real size
/// (`GGUFParser`), then their contents against what llama.cpp asserts on
/// (`GGUFContentCheck`), and a file that fails any check is refused with a
/// typed error. Only the header is read, never the weights.
struct GGUFFile: Sendable, Equatable {
  /// The format version (2 or 3).
  var version: UInt32
  var tensorCount: Int
  /// The metadata. Arrays keep their length and, when short and integer, their
  /// values (`GGUFArray`); the vocabulary's strings are not kept.
  var metadata: [String: GGUFValue]
  /// Each tensor's dimensions, `ne[0]` first, as llama.cpp sees them.
  var tensorShapes: [String: [Int]] = [:]
  /// The weights' bytes by layer, for `OffloadPlan`.
  var tensorBytes = GGUFTensorBytes()
  /// The file that was read: the loader checks that it still is the file
  /// the path names before llama.cpp sees it.
  var identity: FileIdentity

  /// The file's size in bytes.
  var fileSize: Int { identity.size }

  /// `general.name`, the model's own name.
  var name: String? { metadata["general.name"]?.string }
  var architecture: String? { metadata["general.architecture"]?.string }

  /// An integer value of the architecture's own keys (`llama.block_count`).
  func architectureInteger(_ key: String) -> Int? {
    architecture.flatMap { metadata["\($0).\(key)"]?.integer }
  }

  /// The width of one attention head: `attention.key_length`, else embedding
  /// size / heads, as llama.cpp reads it; nil when the header has neither.
  var attentionHeadSize: Int? {
    if let keyLength = architectureInteger("attention.key_length") { return keyLength }
    guard let embedding = architectureInteger("embedding_length"),
      let heads = architectureInteger("attention.head_count"), heads > 0
    else { return nil }
    return embedding / heads
  }

  /// Bytes of KV cache per token of context (keys and values, f16), from the
  /// header; nil when the header lacks the shape, `Int.max` when it does not
  /// fit an `Int` (such a model needs more memory than any machine has).
  var kvBytesPerToken: Int? {
    guard let layers = architectureInteger("block_count"),
      let embedding = architectureInteger("embedding_length"),
      let heads = architectureInteger("attention.head_count"), heads > 0
    else { return nil }
    let kvHeads = architectureInteger("attention.head_count_kv") ?? heads
    var product = embedding / heads
    for factor in [kvHeads, layers, 2, 2] {
      let (next, overflow) = product.multipliedReportingOverflow(by: factor)
      guard !overflow else { return Int.max }
      product = next
    }
    return max(0, product)
  }

  /// Reads and checks the file at `path`, through one open descriptor: the
  /// identity recorded is that of the bytes checked (`FileIdentity`).
  static func read(path: String) throws(HybridInferenceError) -> GGUFFile {
    func refuse(_ reason: String) -> HybridInferenceError {
      .invalidModelFile(path: path, reason: reason)
    }
    let opened: OpenModelFile
    do {
      opened = try OpenModelFile(path: path)
    } catch {
      throw refuse(error.reason)
    }
    guard !opened.identity.isDirectory else { throw refuse("it is a directory") }
    guard opened.identity.isRegular else { throw refuse("it is not a regular file (a pipe, socket or device)") }
    guard opened.identity.size > 0 else { throw refuse("the file is empty") }
    do {
      let file = try opened.withMappedBytes { buffer throws(GGUFParser.Failure) in
        var parser = GGUFParser(buffer)
        return try parser.parse(identity: opened.identity)
      }
      try GGUFContentCheck.validate(file)
      return file
    } catch let error as GGUFParser.Failure {
      throw refuse(error.reason)
    } catch let error as GGUFProblem {
      throw refuse(error.reason)
    } catch {
      throw refuse("\(error)")
    }
  }
}

/// A metadata value kept from the header.
enum GGUFValue: Sendable, Equatable {
  case integer(Int)
  case float(Double)
  case bool(Bool)
  case string(String)
  case array(GGUFArray)

  var integer: Int? {
    if case .integer(let value) = self { return value }
    return nil
  }

  var string: String? {
    if case .string(let value) = self { return value }
    return nil
  }

  var array: GGUFArray? {
    if case .array(let value) = self { return value }
    return nil
  }
}

/// What is kept of a metadata array: enough to check it against llama.cpp's
/// expectations without holding a 150,000-entry vocabulary in memory.
struct GGUFArray: Sendable, Equatable {
  /// The GGUF type of the elements (4 = uint32, 5 = int32, 6 = float32, 8 = string...).
  var elementType: UInt32
  var count: Int
  /// The values of a short integer array (per-layer hyper-parameters); nil for
  /// other arrays.
  var integers: [Int]?
  /// For the token list only: the first string that occurs twice, as llama.cpp
  /// would see it (an empty token is renamed `[EMPTY_<index>]`).
  var firstDuplicate: String?
  /// For the token list only: which bytes have a token of their own, for
  /// SentencePiece's byte fallback (`GGUFTokenizerRuntimeCheck`).
  var byteTokens: ByteTokenSet?
  /// For `tokenizer.ggml.precompiled_charsmap` only: its bytes (a T5 tokenizer's
  /// normalization trie, some hundred kilobytes), walked by `GGUFCharsmapCheck`.
  var bytes: [UInt8]?

  /// What an array keeps beyond its type and length.
  enum Kept {
    /// The values of a short integer array.
    case integers
    /// The token list's first duplicate and its byte tokens.
    case tokenFacts
    /// The raw bytes of a byte array.
    case bytes
  }

  /// The longest integer array whose values are kept: per-layer values, at most
  /// `LLAMA_MAX_LAYERS` (512) of them.
  static let keptIntegerCount = 1024
}
