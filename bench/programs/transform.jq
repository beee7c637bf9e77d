# jq workload: group, reshape and summarise an array of records.
group_by(.group)
| map({group: .[0].group,
       count: length,
       names: (map(.name | ascii_upcase) | sort | .[0:5]),
       tags: (map(.tags[]) | unique),
       total: (map(.value) | add)})
| sort_by(-.total)
| {groups: length, top: .[0:10], all: (map("\(.group)=\(.total)") | join(";"))}
