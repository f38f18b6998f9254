import Foundation

/// Encodes a request body as JSON, writing every `GenerationSchema` and
/// `JSONValue` in it with the library's own JSON writer.
///
/// Foundation's `JSONEncoder` writes an object's keys in hash order, which is
/// wrong for a JSON Schema: the order of `properties` is the order the model
/// writes the fields in (Gemini follows it, and so does the grammar an
/// OpenAI-compatible server derives from it). It also refuses a body nested
/// past 512 levels in all, the request's own levels included, so a tool
/// value within `JSONValue.maximumDepth` would be refused by it, and it
/// cannot write an integer beyond 64 bits. So a schema or a value met while
/// encoding writes a placeholder string that no other text can contain (a
/// fresh random nonce per body), and its JSON text replaces the placeholder
/// in the encoded JSON, in one pass.
package enum RequestBodyEncoder {
  package static func encode(_ body: some Encodable) throws(HybridInferenceError) -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.withoutEscapingSlashes]
    let splices = JSONSplices()
    if let key = JSONSplices.key { encoder.userInfo[key] = splices }
    let data: Data
    do {
      data = try encoder.encode(body)
    } catch let error as HybridInferenceError {
      throw error
    } catch {
      throw .invalidOptions("the request could not be encoded: \(error)")
    }
    return splices.apply(to: data)
  }
}

/// The JSON texts one `RequestBodyEncoder.encode` met, each under its
/// placeholder. A class behind a lock because `JSONEncoder.userInfo` takes
/// `Sendable` values and `encode(to:)` can only reach it by reference.
final class JSONSplices: Sendable {
  static let key = CodingUserInfoKey(rawValue: "HybridInference.JSONSplices")

  private let nonce = UInt64.random(in: 0...UInt64.max)
  private let texts = Locked<[String]>([])

  /// The encoder's splices, when it is `RequestBodyEncoder`'s.
  static func of(_ encoder: any Encoder) -> JSONSplices? {
    key.flatMap { encoder.userInfo[$0] as? JSONSplices }
  }

  /// Records `jsonText` and returns the string to encode in its place.
  func placeholder(for jsonText: String) -> String {
    texts.withLock { texts in
      texts.append(jsonText)
      return "\u{E000}\(nonce)-\(texts.count - 1)\u{E001}"
    }
  }

  /// `data` with every placeholder string (quotes included) replaced by its
  /// text: one pass over the body, whatever the number of splices.
  func apply(to data: Data) -> Data {
    let texts = texts.withLock { $0 }
    guard !texts.isEmpty else { return data }
    let bytes = [UInt8](data)
    let open = Array("\"\u{E000}\(nonce)-".utf8)
    let close = Array("\u{E001}\"".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count + texts.reduce(0) { $0 + $1.utf8.count })
    var index = 0
    while index < bytes.count {
      if bytes[index] == open[0], bytes[index...].starts(with: open) {
        var cursor = index + open.count
        var number = 0
        while cursor < bytes.count, cursor - index - open.count < 18,
          (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[cursor])
        {
          number = number * 10 + Int(bytes[cursor] - UInt8(ascii: "0"))
          cursor += 1
        }
        if cursor > index + open.count, number < texts.count, bytes[cursor...].starts(with: close) {
          out.append(contentsOf: texts[number].utf8)
          index = cursor + close.count
          continue
        }
      }
      out.append(bytes[index])
      index += 1
    }
    return Data(out)
  }
}
