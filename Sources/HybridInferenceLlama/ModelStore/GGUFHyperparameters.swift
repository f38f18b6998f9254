import HybridInferenceCore
import HybridInferenceJinja

/// The `<architecture>.` keys of a GGUF file, read the way llama.cpp's loader
/// reads them (`get_key`, `get_key_or_arr`).
struct GGUFHyperparameters {
  let file: GGUFFile
  let architecture: String

  /// The full key: `llama.block_count` for `block_count`.
  func key(_ name: String) -> String { "\(architecture).\(name)" }

  /// A count llama.cpp reads as `uint32`; nil when the key is absent.
  func count(_ name: String) throws(GGUFProblem) -> Int? {
    guard let value = file.metadata[key(name)] else { return nil }
    guard let integer = value.integer, (0...Int(UInt32.max)).contains(integer) else {
      throw GGUFProblem(reason: "\(key(name)) is not a count (\(Self.describe(value)))")
    }
    return integer
  }

  /// A count llama.cpp cannot do without.
  func requiredCount(_ name: String) throws(GGUFProblem) -> Int {
    guard let value = try count(name) else { throw GGUFProblem(reason: "\(key(name)) is missing") }
    return value
  }

  /// A per-layer value (`get_key_or_arr`): one number for every layer, or an
  /// array of exactly `layers` numbers; nil when the key is absent.
  func perLayer(_ name: String, layers: Int) throws(GGUFProblem) -> [Int]? {
    guard let value = file.metadata[key(name)] else { return nil }
    guard let array = value.array else {
      return try count(name).map { [Int](repeating: $0, count: layers) }
    }
    guard array.count == layers else {
      throw GGUFProblem(
        reason: "\(key(name)) has \(array.count) entries but the model has \(layers) layers")
    }
    guard let integers = array.integers, integers.allSatisfy({ (0...Int(UInt32.max)).contains($0) }) else {
      throw GGUFProblem(reason: "\(key(name)) is not an array of counts")
    }
    return integers
  }

  func string(_ name: String) -> String? { file.metadata[key(name)]?.string }

  private static func describe(_ value: GGUFValue) -> String {
    switch value {
    case .integer(let integer): "\(integer)"
    case .float(let float): "the number \(float)"
    case .bool(let bool): "\(bool)"
    case .string(let string): "the text '\(string.prefix(40))'"
    case .array(let array): "an array of \(array.count)"
    }
  }
}
