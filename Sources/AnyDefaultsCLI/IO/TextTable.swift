/// A plain-text table with aligned columns, for `bench` and `tour`.
///
/// ```
/// TextTable(["store", "read"], rows: [["memory:", "40 ns"]]).render()
/// ```
struct TextTable {
    var header: [String]
    var rows: [[String]]

    init(_ header: [String], rows: [[String]]) {
        self.header = header
        self.rows = rows
    }

    /// The table's lines, each ending in a newline: the header, a rule, then the rows; columns
    /// two spaces apart, `indent` spaces in.
    func render(indent: Int = 0) -> String {
        let lines = [header] + rows
        var widths = [Int](repeating: 0, count: lines.map(\.count).max() ?? 0)
        for line in lines {
            for (column, cell) in line.enumerated() { widths[column] = max(widths[column], cell.count) }
        }
        let margin = String(repeating: " ", count: indent)
        func render(_ line: [String]) -> String {
            let cells = line.enumerated().map { column, cell in
                column == line.count - 1 ? cell : cell + String(repeating: " ", count: widths[column] - cell.count)
            }
            return margin + cells.joined(separator: "  ") + "\n"
        }
        let rule = margin + widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ") + "\n"
        return render(header) + rule + rows.map(render).joined()
    }
}
