import CLlama
import Foundation
import HybridInferenceCore
import HybridInferenceJinja

/// Reads a GGUF header from memory with a bounds check on every read.
///
/// Every count is checked against what the rest of the file could hold
/// before anything is allocated for it, every offset and size sum is
/// overflow-checked (a tensor offset near `Int.max` is a refusal, not a
/// trap), and nothing is reserved ahead of the data that fills it beyond
/// `reservedCapacity`.
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

  /// The header of the file `identity` names, whose bytes these are.
  mutating func parse(identity: FileIdentity) throws(Failure) -> GGUFFile {
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
      // The layout below depends on it; llama.cpp refuses any other type.
      if key == "general.alignment", type != 4 {
        throw Failure(reason: "general.alignment has GGUF type \(type), not uint32 (4)")
      }
      let keeps: GGUFArray.Kept =
        switch key {
        case "tokenizer.ggml.tokens": .tokenFacts
        case "tokenizer.ggml.precompiled_charsmap": .bytes
        default: .integers
        }
      if let value = try readValue(type: type, keeps: keeps) {
        metadata[key] = value
      }
    }
    let alignment = metadata["general.alignment"]?.integer ?? 32
    guard alignment > 0, alignment.nonzeroBitCount == 1 else {
      throw Failure(reason: "invalid alignment \(alignment)")
    }
    var tensorEnds: [(name: String, offset: Int, size: Int)] = []
    var tensorShapes: [String: [Int]] = [:]
    var tensorBytes = GGUFTensorBytes()
    for _ in 0..<tensorCount {
      let tensor = try readTensorInfo(alignment: alignment)
      tensorEnds.append((tensor.name, tensor.offset, tensor.size))
      tensorShapes[tensor.name] = tensor.shape
      tensorBytes.add(name: tensor.name, bytes: tensor.size)
    }
    // The data starts at the next multiple of the alignment (a power of two
    // up to 2^62, so the sum can overflow only past the end of any file).
    let (padded, paddingOverflow) = offset.addingReportingOverflow(alignment - 1)
    guard !paddingOverflow else {
      throw Failure(reason: "the tensor data would start past byte \(Int.max) (alignment \(alignment))")
    }
    let dataStart = padded / alignment * alignment
    for tensor in tensorEnds {
      let (start, startOverflow) = dataStart.addingReportingOverflow(tensor.offset)
      let (end, endOverflow) = start.addingReportingOverflow(tensor.size)
      guard !startOverflow, !endOverflow, end <= bytes.count else {
        let end = startOverflow || endOverflow ? "past byte \(Int.max)" : "at byte \(end)"
        throw Failure(reason: "tensor \(tensor.name) ends \(end) but the file has \(bytes.count): truncated")
      }
    }
    return GGUFFile(
      version: version, tensorCount: tensorCount, metadata: metadata, tensorShapes: tensorShapes,
      tensorBytes: tensorBytes, identity: identity)
  }

  private mutating func readTensorInfo(alignment: Int) throws(Failure) -> (
    name: String, offset: Int, size: Int, shape: [Int]
  ) {
    let name = try readString()
    let dimensionCount = try read(UInt32.self)
    guard (1...4).contains(dimensionCount) else {
      throw Failure(reason: "tensor \(name) has \(dimensionCount) dimensions")
    }
    var elements = 1
    var firstDimension = 0
    var shape: [Int] = []
    for index in 0..<Int(dimensionCount) {
      let dimension = try read(UInt64.self)
      guard dimension > 0, dimension < UInt64(Int.max) else {
        throw Failure(reason: "tensor \(name) has an invalid dimension \(dimension)")
      }
      if index == 0 { firstDimension = Int(dimension) }
      shape.append(Int(dimension))
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
    return (name, Int(dataOffset), size, shape)
  }

  /// Reads one value; `keeps` says what an array keeps of its elements.
  private mutating func readValue(type: UInt32, keeps: GGUFArray.Kept = .integers) throws(Failure) -> GGUFValue? {
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
      return .array(try readArray(of: elementType, count: count, keeps: keeps))
    case 10:
      let value = try read(UInt64.self)
      return value <= UInt64(Int.max) ? .integer(Int(value)) : nil
    case 11: return .integer(Int(try read(Int64.self)))
    case 12: return .float(try read(Double.self))
    default: throw Failure(reason: "unknown metadata type \(type)")
    }
  }

  private mutating func readArray(
    of elementType: UInt32, count: Int, keeps: GGUFArray.Kept
  ) throws(Failure) -> GGUFArray {
    guard elementType <= 12, elementType != 9 else {
      throw Failure(reason: "unknown metadata array element type \(elementType)")
    }
    var array = GGUFArray(elementType: elementType, count: count)
    let isInteger = (0...5).contains(elementType) || elementType == 10 || elementType == 11
    if elementType == 8 {
      // Bytes, not Strings: Swift's String equality is canonical equivalence,
      // llama.cpp's is byte for byte.
      let findsDuplicates = keeps == .tokenFacts
      // Reserved for at most `reservedCapacity` tokens: a count is checked
      // against the bytes left (8 a string at least), but a set entry costs
      // several times that, so a forged count must not size the set.
      var seen = Set<Data>(minimumCapacity: findsDuplicates ? min(count, Self.reservedCapacity) : 0)
      var byteTokens = ByteTokenSet()
      for index in 0..<count {
        let start = try skipString()
        guard findsDuplicates else { continue }
        let raw = UnsafeRawBufferPointer(rebasing: bytes[start..<offset])
        byteTokens.insert(token: raw)
        var token = Data(raw)
        if token.isEmpty { token = Data("[EMPTY_\(index)]".utf8) }  // llama.cpp's renaming
        if !seen.insert(token).inserted, array.firstDuplicate == nil {
          array.firstDuplicate = String(decoding: token, as: UTF8.self)
        }
      }
      if findsDuplicates { array.byteTokens = byteTokens }
    } else if keeps == .bytes, elementType == 0 || elementType == 1 {
      array.bytes = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]))
      offset += count
    } else if isInteger, count <= GGUFArray.keptIntegerCount {
      var integers: [Int] = []
      for _ in 0..<count {
        if case .integer(let value) = try readValue(type: elementType) { integers.append(value) }
      }
      array.integers = integers.count == count ? integers : nil
    } else {
      // Fixed-size elements: step over them at once (readCount checked that they fit).
      offset += count * Self.minimumSize(of: elementType)
    }
    return array
  }

  /// The most entries reserved ahead of reading them: more than the largest
  /// vocabularies (Gemma's 262,144 tokens).
  static let reservedCapacity = 1 << 19

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
    let start = try skipString()
    return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
  }

  /// Steps over a string; returns where its bytes start.
  @discardableResult
  private mutating func skipString() throws(Failure) -> Int {
    let length = try read(UInt64.self)
    guard length <= UInt64(remaining) else {
      throw Failure(reason: "a string of \(length) bytes runs past the end of the file")
    }
    let start = offset
    offset += Int(length)
    return start
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
