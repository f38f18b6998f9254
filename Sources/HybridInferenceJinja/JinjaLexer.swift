/// Splits a template into tokens the way jinja2's lexer does with
/// `trim_blocks=True, lstrip_blocks=True` (transformers' settings).
///
/// Whitespace control is settled here, not in the parser: `{%-`/`-%}` strip
/// all whitespace on that side, a block tag swallows the newline after it,
/// and the indentation before a block tag on its own line is dropped. Comments
/// vanish; `{% raw %}` bodies become text.
struct JinjaLexer {
  let bytes: [UInt8]
  var position = 0
  var line = 1
  var tokens: [JinjaToken] = []
  /// jinja2's `line_starting`: whether the last tag's match ended a line.
  var lineStarting = true

  init(_ source: String) {
    // jinja2 normalises newlines in text and literals to "\n".
    bytes = Array(source.replacingOccurrences(of: "\r\n", with: "\n").utf8)
  }

  static func tokenize(_ source: String) throws(JinjaError) -> [JinjaToken] {
    var lexer = JinjaLexer(source)
    try lexer.run()
    return lexer.tokens
  }

  private enum TagKind { case variable, block, comment }

  private mutating func run() throws(JinjaError) {
    while position < bytes.count {
      let (start, kind) = nextTagStart(from: position)
      var text = bytes[position..<start]
      let textLine = line
      countLines(in: text)
      position = start
      guard let kind else {
        emitText(text, line: textLine)
        break
      }
      let modifier = start + 2 < bytes.count ? bytes[start + 2] : 0
      if modifier == UInt8(ascii: "-") {
        while let last = text.last, Self.isSpace(last) { text = text.dropLast() }
      } else if modifier != UInt8(ascii: "+"), kind != .variable {
        let lineStart = (text.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 }) ?? text.startIndex
        let tail = text[lineStart...]
        if lineStart > text.startIndex || lineStarting, !tail.isEmpty, tail.allSatisfy(Self.isSpace) {
          text = text[..<lineStart]
        }
      }
      emitText(text, line: textLine)
      position = start + 2 + (modifier == UInt8(ascii: "-") || modifier == UInt8(ascii: "+") ? 1 : 0)
      switch kind {
      case .comment: try skipComment()
      case .variable: try lexTag(block: false)
      case .block:
        if try !lexRaw() { try lexTag(block: true) }
      }
    }
    tokens.append(JinjaToken(kind: .end, line: line))
  }

  private func nextTagStart(from start: Int) -> (Int, TagKind?) {
    var index = start
    while index + 1 < bytes.count {
      if bytes[index] == UInt8(ascii: "{") {
        switch bytes[index + 1] {
        case UInt8(ascii: "{"): return (index, .variable)
        case UInt8(ascii: "%"): return (index, .block)
        case UInt8(ascii: "#"): return (index, .comment)
        default: break
        }
      }
      index += 1
    }
    return (bytes.count, nil)
  }

  private mutating func emitText(_ text: ArraySlice<UInt8>, line: Int) {
    guard !text.isEmpty else { return }
    tokens.append(JinjaToken(kind: .text(String(decoding: text, as: UTF8.self)), line: line))
  }

  mutating func countLines(in slice: ArraySlice<UInt8>) {
    for byte in slice where byte == UInt8(ascii: "\n") { line += 1 }
  }

  static func isSpace(_ byte: UInt8) -> Bool {
    byte == 0x20 || (0x09...0x0D).contains(byte)
  }

  /// After a tag's closing delimiter: `-` eats all whitespace, a block or
  /// comment otherwise eats one newline (trim_blocks), `+` keeps everything.
  mutating func finishTag(stripAll: Bool, keep: Bool, trimsNewline: Bool) {
    lineStarting = false
    if stripAll {
      let start = position
      while position < bytes.count, Self.isSpace(bytes[position]) { position += 1 }
      countLines(in: bytes[start..<position])
      lineStarting = position > start && bytes[position - 1] == UInt8(ascii: "\n")
    } else if !keep, trimsNewline, position < bytes.count, bytes[position] == UInt8(ascii: "\n") {
      position += 1
      line += 1
      lineStarting = true
    }
  }

  private mutating func skipComment() throws(JinjaError) {
    let startLine = line
    while position + 1 < bytes.count {
      if bytes[position] == UInt8(ascii: "#"), bytes[position + 1] == UInt8(ascii: "}") {
        let before = bytes[position - 1]
        position += 2
        finishTag(
          stripAll: before == UInt8(ascii: "-"), keep: before == UInt8(ascii: "+"), trimsNewline: true)
        return
      }
      if bytes[position] == UInt8(ascii: "\n") { line += 1 }
      position += 1
    }
    throw JinjaError(kind: .syntax, message: "unterminated comment", line: startLine)
  }

  /// `{% raw %}...{% endraw %}`: the body as text. False when the tag is another.
  private mutating func lexRaw() throws(JinjaError) -> Bool {
    var index = position
    while index < bytes.count, Self.isSpace(bytes[index]) { index += 1 }
    guard bytes[index...].starts(with: Array("raw".utf8)) else { return false }
    index += 3
    while index < bytes.count, Self.isSpace(bytes[index]) { index += 1 }
    let strip = index < bytes.count && bytes[index] == UInt8(ascii: "-")
    if strip { index += 1 }
    guard bytes[index...].starts(with: Array("%}".utf8)) else { return false }
    position = index + 2
    if strip { while position < bytes.count, Self.isSpace(bytes[position]) { position += 1 } }
    let startLine = line
    var search = position
    while search + 1 < bytes.count {
      if bytes[search] == UInt8(ascii: "{"), bytes[search + 1] == UInt8(ascii: "%") {
        var cursor = search + 2
        let modifier = cursor < bytes.count ? bytes[cursor] : 0
        if modifier == UInt8(ascii: "-") || modifier == UInt8(ascii: "+") { cursor += 1 }
        while cursor < bytes.count, Self.isSpace(bytes[cursor]) { cursor += 1 }
        if bytes[cursor...].starts(with: Array("endraw".utf8)) {
          cursor += 6
          while cursor < bytes.count, Self.isSpace(bytes[cursor]) { cursor += 1 }
          let close = cursor < bytes.count ? bytes[cursor] : 0
          if close == UInt8(ascii: "-") || close == UInt8(ascii: "+") { cursor += 1 }
          guard bytes[cursor...].starts(with: Array("%}".utf8)) else { break }
          var body = bytes[position..<search]
          if modifier == UInt8(ascii: "-") { while let last = body.last, Self.isSpace(last) { body = body.dropLast() } }
          emitText(body, line: startLine)
          countLines(in: bytes[position..<search])
          position = cursor + 2
          finishTag(
            stripAll: close == UInt8(ascii: "-"), keep: close == UInt8(ascii: "+"), trimsNewline: true)
          return true
        }
      }
      search += 1
    }
    throw JinjaError(kind: .syntax, message: "unterminated raw block", line: startLine)
  }
}
