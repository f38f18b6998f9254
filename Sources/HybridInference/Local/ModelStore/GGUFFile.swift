import CLlama
import Foundation

/// What the library needs to know about a GGUF file before llama.cpp sees it.
///
/// llama.cpp aborts the whole process on some malformed files, which no Swift
/// error handling can catch. So every file is read here first: the header, the
/// metadata and the tensor table are checked against the file's real size, and
/// a file that fails any check is refused with a typed error.
struct GGUFFile: Sendable, Equatable {
  /// The format version (2 or 3).
  var version: UInt32
  var tensorCount: Int
  /// Scalar and string metadata; arrays (the vocabulary) are checked but not kept.
  var metadata: [String: GGUFValue]
  /// The file's size in bytes.
  var fileSize: Int

  /// `general.name`, the model's own name.
  var name: String? { metadata["general.name"]?.string }
  var architecture: String? { metadata["general.architecture"]?.string }

  /// An integer value of the architecture's own keys (`llama.block_count`).
  func architectureInteger(_ key: String) -> Int? {
    architecture.flatMap { metadata["\($0).\(key)"]?.integer }
  }

  /// Bytes of KV cache per token of context (keys and values, f16), from the
  /// header; nil when the header lacks the shape.
  var kvBytesPerToken: Int? {
    guard let layers = architectureInteger("block_count"),
      let embedding = architectureInteger("embedding_length"),
      let heads = architectureInteger("attention.head_count"), heads > 0
    else { return nil }
    let kvHeads = architectureInteger("attention.head_count_kv") ?? heads
    let kvWidth = embedding / heads * kvHeads
    return layers * kvWidth * 2 * 2
  }

  /// Reads and checks the file at `path`.
  static func read(path: String) throws(HybridInferenceError) -> GGUFFile {
    func refuse(_ reason: String) -> HybridInferenceError {
      .invalidModelFile(path: path, reason: reason)
    }
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
      throw refuse("no such file")
    }
    guard !isDirectory.boolValue else { throw refuse("it is a directory") }
    let data: Data
    do {
      data = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
    } catch {
      throw refuse("cannot be read (\(error.localizedDescription))")
    }
    guard !data.isEmpty else { throw refuse("the file is empty") }
    do {
      return try data.withUnsafeBytes { buffer in
        var parser = GGUFParser(buffer)
        return try parser.parse()
      }
    } catch let error as GGUFParser.Failure {
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

  var integer: Int? {
    if case .integer(let value) = self { return value }
    return nil
  }

  var string: String? {
    if case .string(let value) = self { return value }
    return nil
  }
}

/// Reads a GGUF header from memory with a bounds check on every read.
struct GGUFParser {
  struct Failure: Error {
    var reason: String
  }

  private let bytes: UnsafeRawBufferPointer
  private var offset = 0

  init(_ bytes: UnsafeRawBufferPointer) {
    self.bytes = bytes
  }

  private var remaining: Int { bytes.count - offset }

  mutating func parse() throws(Failure) -> GGUFFile {
    guard bytes.count >= 24 else { throw Failure(reason: "too short for a GGUF header") }
    guard try read(UInt32.self) == 0x4655_4747 else {  // "GGUF", little-endian
      throw Failure(reason: "wrong magic: not a GGUF file")
    }
    let version = try read(UInt32.self)
    guard version == 2 || version == 3 else {
      throw Failure(reason: "unsupported GGUF version \(version)")
    }
    let tensorCount = try readCount(minimumBytesEach: 28, what: "tensor")
    let keyValueCount = try readCount(minimumBytesEach: 13, what: "metadata")
    var metadata: [String: GGUFValue] = [:]
    for _ in 0..<keyValueCount {
      let key = try readString()
      let type = try read(UInt32.self)
      if let value = try readValue(type: type) { metadata[key] = value }
    }
    let alignment = metadata["general.alignment"]?.integer ?? 32
    guard alignment > 0, alignment.nonzeroBitCount == 1 else {
      throw Failure(reason: "invalid alignment \(alignment)")
    }
    var tensorEnds: [(name: String, offset: Int, size: Int)] = []
    for _ in 0..<tensorCount {
      tensorEnds.append(try readTensorInfo(alignment: alignment))
    }
    let dataStart = (offset + alignment - 1) / alignment * alignment
    for tensor in tensorEnds {
      let (end, overflow) = (dataStart + tensor.offset).addingReportingOverflow(tensor.size)
      guard !overflow, end <= bytes.count else {
        throw Failure(
          reason: "tensor \(tensor.name) ends at byte \(overflow ? Int.max : end) "
            + "but the file has \(bytes.count): truncated")
      }
    }
    return GGUFFile(
      version: version, tensorCount: tensorCount, metadata: metadata, fileSize: bytes.count)
  }

  private mutating func readTensorInfo(alignment: Int) throws(Failure) -> (
    name: String, offset: Int, size: Int
  ) {
    let name = try readString()
    let dimensionCount = try read(UInt32.self)
    guard (1...4).contains(dimensionCount) else {
      throw Failure(reason: "tensor \(name) has \(dimensionCount) dimensions")
    }
    var elements = 1
    var firstDimension = 0
    for index in 0..<Int(dimensionCount) {
      let dimension = try read(UInt64.self)
      guard dimension > 0, dimension < UInt64(Int.max) else {
        throw Failure(reason: "tensor \(name) has an invalid dimension \(dimension)")
      }
      if index == 0 { firstDimension = Int(dimension) }
      let (product, overflow) = elements.multipliedReportingOverflow(by: Int(dimension))
      guard !overflow else { throw Failure(reason: "tensor \(name) is impossibly large") }
      elements = product
    }
    let type = try read(UInt32.self)
    let dataOffset = try read(UInt64.self)
    guard type < GGML_TYPE_COUNT.rawValue else {
      throw Failure(reason: "tensor \(name) has unknown type \(type)")
    }
    let blockSize = Int(ggml_blck_size(ggml_type(type)))
    let typeSize = ggml_type_size(ggml_type(type))
    guard blockSize > 0, typeSize > 0, firstDimension % blockSize == 0 else {
      throw Failure(reason: "tensor \(name) has an unusable type \(type) for its shape")
    }
    let (size, overflow) = (elements / blockSize).multipliedReportingOverflow(by: Int(typeSize))
    guard !overflow, dataOffset < UInt64(Int.max), Int(dataOffset) % alignment == 0 else {
      throw Failure(reason: "tensor \(name) has an invalid offset or size")
    }
    return (name, Int(dataOffset), size)
  }

  /// Reads one value; returns it when it is a scalar or string worth keeping.
  private mutating func readValue(type: UInt32) throws(Failure) -> GGUFValue? {
    switch type {
    case 0: return .integer(Int(try read(UInt8.self)))
    case 1: return .integer(Int(try read(Int8.self)))
    case 2: return .integer(Int(try read(UInt16.self)))
    case 3: return .integer(Int(try read(Int16.self)))
    case 4: return .integer(Int(try read(UInt32.self)))
    case 5: return .integer(Int(try read(Int32.self)))
    case 6: return .float(Double(try read(Float.self)))
    case 7: return .bool(try read(UInt8.self) != 0)
    case 8: return .string(try readString())
    case 9:
      let elementType = try read(UInt32.self)
      guard elementType != 9 else { throw Failure(reason: "nested metadata arrays") }
      let count = try readCount(minimumBytesEach: Self.minimumSize(of: elementType), what: "array")
      for _ in 0..<count { _ = try readValue(type: elementType) }
      return nil
    case 10:
      let value = try read(UInt64.self)
      return value <= UInt64(Int.max) ? .integer(Int(value)) : nil
    case 11: return .integer(Int(try read(Int64.self)))
    case 12: return .float(try read(Double.self))
    default: throw Failure(reason: "unknown metadata type \(type)")
    }
  }

  private static func minimumSize(of type: UInt32) -> Int {
    switch type {
    case 0, 1, 7: 1
    case 2, 3: 2
    case 4, 5, 6: 4
    default: 8  // 64-bit scalars, and strings (their length alone is 8 bytes)
    }
  }

  /// Reads a count and checks that that many items could fit in what is left,
  /// so a corrupt count cannot make the parser loop or allocate without end.
  private mutating func readCount(minimumBytesEach: Int, what: String) throws(Failure) -> Int {
    let count = try read(UInt64.self)
    guard count <= UInt64(remaining / max(minimumBytesEach, 1)) else {
      throw Failure(reason: "\(what) count \(count) is beyond the end of the file")
    }
    return Int(count)
  }

  private mutating func readString() throws(Failure) -> String {
    let length = try read(UInt64.self)
    guard length <= UInt64(remaining) else {
      throw Failure(reason: "a string of \(length) bytes runs past the end of the file")
    }
    let start = offset
    offset += Int(length)
    return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
  }

  private mutating func read<T: FixedWidthInteger>(_: T.Type) throws(Failure) -> T {
    guard remaining >= MemoryLayout<T>.size else {
      throw Failure(reason: "the header is cut short at byte \(offset)")
    }
    let value = bytes.loadUnaligned(fromByteOffset: offset, as: T.self)
    offset += MemoryLayout<T>.size
    return T(littleEndian: value)
  }

  private mutating func read(_: Float.Type) throws(Failure) -> Float {
    Float(bitPattern: try read(UInt32.self))
  }

  private mutating func read(_: Double.Type) throws(Failure) -> Double {
    Double(bitPattern: try read(UInt64.self))
  }
}
