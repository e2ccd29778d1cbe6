"""Drawing for the pages, inline and offline: SVG charts, heat maps, run timelines and workflow
graphs (Graphviz when installed)."""
