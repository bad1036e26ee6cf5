// Builds src/main.js for production as ES modules, beside index.html: chunks then load by
// import(), not by <script src> (refused under require-trusted-types-for)
// and not through a global array any script of the page could push into.
import fs from "node:fs";
import path from "node:path";
import webpack from "webpack";

const dist = path.resolve("dist");
webpack({
  mode: "production",
  performance: { hints: false },
  entry: "./src/main.js",
  experiments: { outputModule: true },
  output: { module: true, path: dist, filename: "main.js", chunkFilename: "[name].[contenthash].js", clean: true },
}, (err, stats) => {
  if (err || stats.hasErrors()) {
    console.error(err || stats.toString("errors-only"));
    process.exit(1);
  }
  fs.copyFileSync("index.html", path.join(dist, "index.html"));
  console.log(stats.toString({ assets: true, modules: false, colors: false }));
});
