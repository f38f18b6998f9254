/// The inside of `{{ ... }}` and `{% ... %}`: names, literals and symbols.
extension JinjaLexer {
  private static let twoCharacterSymbols: Set<String> = ["//", "**", "==", "!=", "<=", ">="]
  private static let oneCharacterSymbols = Set("+-*/%~<>=()[]{},.:|".map { String($0) })

  mutating func lexTag(block: Bool) throws(JinjaError) {
    let startLine = line
    tokens.append(JinjaToken(kind: block ? .blockBegin : .variableBegin, line: line))
    var depth = 0
    while true {
      while position < bytes.count, Self.isSpace(bytes[position]) {
        if bytes[position] == UInt8(ascii: "\n") { line += 1 }
        position += 1
      }
      guard position < bytes.count else {
        throw JinjaError(kind: .syntax, message: "unterminated tag", line: startLine)
      }
      if depth == 0, let (length, modifier) = closing(block: block) {
        position += length
        tokens.append(JinjaToken(kind: block ? .blockEnd : .variableEnd, line: line))
        finishTag(stripAll: modifier == "-", keep: modifier == "+", trimsNewline: block)
        return
      }
      let byte = bytes[position]
      if byte == UInt8(ascii: "_") || Self.isLetter(byte) {
        let start = position
        while position < bytes.count,
          bytes[position] == UInt8(ascii: "_") || Self.isLetter(bytes[position]) || Self.isDigit(bytes[position])
        {
          position += 1
        }
        tokens.append(JinjaToken(kind: .name(String(decoding: bytes[start..<position], as: UTF8.self)), line: line))
      } else if Self.isDigit(byte) {
        tokens.append(JinjaToken(kind: try lexNumber(), line: line))
      } else if byte == UInt8(ascii: "'") || byte == UInt8(ascii: "\"") {
        tokens.append(JinjaToken(kind: .string(try lexString()), line: line))
      } else {
        let two = position + 1 < bytes.count ? String(decoding: bytes[position...position + 1], as: UTF8.self) : ""
        let symbol: String
        if Self.twoCharacterSymbols.contains(two) {
          symbol = two
        } else if Self.oneCharacterSymbols.contains(String(UnicodeScalar(byte))) {
          symbol = String(UnicodeScalar(byte))
        } else {
          throw JinjaError(kind: .syntax, message: "unexpected character '\(UnicodeScalar(byte))'", line: line)
        }
        if "([{".contains(symbol) { depth += 1 }
        if ")]}".contains(symbol) { depth -= 1 }
        position += symbol.utf8.count
        tokens.append(JinjaToken(kind: .symbol(symbol), line: line))
      }
    }
  }

  /// The closing delimiter at the cursor: its length and whitespace modifier.
  private func closing(block: Bool) -> (Int, String)? {
    let close: [UInt8] = block ? Array("%}".utf8) : Array("}}".utf8)
    if bytes[position...].starts(with: close) { return (2, "") }
    let modifier = bytes[position]
    if modifier == UInt8(ascii: "-") || (block && modifier == UInt8(ascii: "+")),
      bytes[(position + 1)...].starts(with: close)
    {
      return (3, String(UnicodeScalar(modifier)))
    }
    return nil
  }

  private static func isLetter(_ byte: UInt8) -> Bool {
    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
  }

  private static func isDigit(_ byte: UInt8) -> Bool {
    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
  }

  private mutating func lexNumber() throws(JinjaError) -> JinjaToken.Kind {
    let start = position
    while position < bytes.count, Self.isDigit(bytes[position]) || bytes[position] == UInt8(ascii: "_") {
      position += 1
    }
    var isFloat = false
    if position + 1 < bytes.count, bytes[position] == UInt8(ascii: "."), Self.isDigit(bytes[position + 1]) {
      isFloat = true
      position += 1
      while position < bytes.count, Self.isDigit(bytes[position]) { position += 1 }
    }
    let text = String(decoding: bytes[start..<position], as: UTF8.self).replacingOccurrences(of: "_", with: "")
    if isFloat { return .float(Double(text) ?? 0) }
    // Python's integers have no width; this engine's have 64 bits, and a
    // wider literal is refused rather than read as 0.
    guard let integer = Int(text) else {
      throw JinjaError(
        kind: .unsupported, message: "integer literal \(text.prefix(40)) is wider than 64 bits", line: line)
    }
    return .integer(integer)
  }

  /// A quoted literal with Python's escapes.
  private mutating func lexString() throws(JinjaError) -> String {
    let quote = bytes[position]
    let startLine = line
    position += 1
    var out: [UInt8] = []
    while position < bytes.count {
      let byte = bytes[position]
      if byte == quote {
        position += 1
        return String(decoding: out, as: UTF8.self)
      }
      if byte == UInt8(ascii: "\n") { line += 1 }
      if byte == UInt8(ascii: "\\"), position + 1 < bytes.count {
        position += 1
        let escaped = bytes[position]
        switch escaped {
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "\\"), UInt8(ascii: "'"), UInt8(ascii: "\""): out.append(escaped)
        case UInt8(ascii: "\n"): line += 1
        case UInt8(ascii: "u"), UInt8(ascii: "x"):
          let width = escaped == UInt8(ascii: "u") ? 4 : 2
          let hex = String(decoding: bytes[(position + 1)..<min(bytes.count, position + 1 + width)], as: UTF8.self)
          guard let code = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(code) else {
            throw JinjaError(kind: .syntax, message: "bad escape in string literal", line: line)
          }
          out += Array(String(Character(scalar)).utf8)
          position += width
        default: out += [UInt8(ascii: "\\"), escaped]
        }
        position += 1
        continue
      }
      out.append(byte)
      position += 1
    }
    throw JinjaError(kind: .syntax, message: "unterminated string", line: startLine)
  }
}
