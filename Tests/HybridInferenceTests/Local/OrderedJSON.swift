import Foundation

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// A JSON reader that keeps object keys in file order, as Python's `json.load`
/// does: `tojson` and `items()` in the reference renders depend on that order.
struct OrderedJSON {
  private let bytes: [UInt8]
  private var index = 0

  static func parse(_ data: Data) throws -> JinjaValue {
    var reader = OrderedJSON(bytes: Array(data))
    let value = try reader.value()
    reader.skipSpace()
    guard reader.index == reader.bytes.count else { throw reader.failure() }
    return value
  }

  private init(bytes: [UInt8]) {
    self.bytes = bytes
  }

  private func failure() -> NSError {
    NSError(domain: "OrderedJSON", code: index, userInfo: [NSLocalizedDescriptionKey: "bad JSON at byte \(index)"])
  }

  private mutating func skipSpace() {
    while index < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[index]) { index += 1 }
  }

  private mutating func value() throws -> JinjaValue {
    skipSpace()
    guard index < bytes.count else { throw failure() }
    switch bytes[index] {
    case UInt8(ascii: "{"):
      index += 1
      var dict = JinjaDict()
      skipSpace()
      if bytes[index] == UInt8(ascii: "}") {
        index += 1
        return .dict(dict)
      }
      while true {
        skipSpace()
        let key = try string()
        skipSpace()
        guard bytes[index] == UInt8(ascii: ":") else { throw failure() }
        index += 1
        dict[key] = try value()
        skipSpace()
        index += 1
        if bytes[index - 1] == UInt8(ascii: "}") { return .dict(dict) }
        guard bytes[index - 1] == UInt8(ascii: ",") else { throw failure() }
      }
    case UInt8(ascii: "["):
      index += 1
      var items: [JinjaValue] = []
      skipSpace()
      if bytes[index] == UInt8(ascii: "]") {
        index += 1
        return .array(items)
      }
      while true {
        items.append(try value())
        skipSpace()
        index += 1
        if bytes[index - 1] == UInt8(ascii: "]") { return .array(items) }
        guard bytes[index - 1] == UInt8(ascii: ",") else { throw failure() }
      }
    case UInt8(ascii: "\""):
      return .string(try string())
    default:
      let start = index
      while index < bytes.count, !",]} \n\r\t".utf8.contains(bytes[index]) { index += 1 }
      let word = String(decoding: bytes[start..<index], as: UTF8.self)
      switch word {
      case "true": return .bool(true)
      case "false": return .bool(false)
      case "null": return .none
      default:
        if let number = Int(word) { return .int(number) }
        if let number = Double(word) { return .double(number) }
        throw failure()
      }
    }
  }

  private mutating func string() throws -> String {
    let start = index
    guard bytes[index] == UInt8(ascii: "\"") else { throw failure() }
    index += 1
    while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
      index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
    }
    index += 1
    let literal = Data(bytes[start..<index])
    guard let text = try JSONSerialization.jsonObject(with: literal, options: .fragmentsAllowed) as? String else {
      throw failure()
    }
    return text
  }
}
