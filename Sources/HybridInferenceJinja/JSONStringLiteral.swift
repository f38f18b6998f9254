/// A JSON string literal, escaped the way Python's `json.dumps` does.
///
/// The writer for the chat templates' `tojson` and the prompts llama.cpp
/// reads (`package`: the on-device target quotes tool arguments with it).
/// Structured output's ordered JSON has its own short writer in the core
/// target (the Jinja target depends on nothing, and the core target on
/// nothing either); a test keeps the two byte-identical. Quotes, backslashes and control characters escaped
/// (`\n`, `\r`, `\t`, `\b`, `\f`, else `\u00XX`), and with `asciiOnly`
/// every non-ASCII scalar as UTF-16 `\uXXXX` units, as `ensure_ascii` does.
package enum JSONStringLiteral {
  /// Appends `text`, quoted, to `out`.
  package static func append(_ text: String, to out: inout String, asciiOnly: Bool = false) {
    out += "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      case "\u{08}": out += "\\b"
      case "\u{0C}": out += "\\f"
      default:
        if scalar.value < 0x20 || (asciiOnly && scalar.value > 0x7E) {
          for unit in String(scalar).utf16 { out += "\\u" + hex4(unit) }
        } else {
          out.unicodeScalars.append(scalar)
        }
      }
    }
    out += "\""
  }

  /// `text` as a quoted JSON string.
  package static func quoted(_ text: String) -> String {
    var out = ""
    append(text, to: &out)
    return out
  }

  private static func hex4(_ unit: UInt16) -> String {
    let digits = String(unit, radix: 16)
    return String(repeating: "0", count: 4 - digits.count) + digits
  }
}
