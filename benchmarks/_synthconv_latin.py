"""Spanish and German templates for ``synthconv.py`` (``--langs en,es,de``): the same facts, themes, filler
and replies as its en/ru/zh ones, written as people write them (a question asks with a verb, a statement
often says it with a noun: "¿A qué ciudad se muda?" / "La mudanza está decidida").

A fact is ``(statements, question about {s}, values, small talk, question about oneself)``: the last one
because "{s}" cannot simply become "yo" / "ich" (the verb agrees with the person).
"""

from __future__ import annotations

NAMES = {"es": ["Lucía", "Mateo", "Carmen", "Diego", "Elena", "Pablo", "Sofía", "Javier"],
         "de": ["Anna", "Lukas", "Greta", "Jonas", "Lena", "Felix", "Mia", "Tobias"]}
MONTHS = {"es": ["enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre"],
          "de": ["Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober", "November", "Dezember"]}

FACTS = {
    "es": [
        (["¡Por fin nos trajimos del refugio un cachorro {v}!", "Adivina: ahora duerme en mi sofá un cachorro {v}, lo adoptamos."],
         "¿Qué raza de perro adoptó {s}?", ["beagle", "corgi", "husky", "caniche", "teckel"],
         ["El perro del vecino ladró otra vez toda la noche.", "Los perros del parque siempre están tan contentos."], "¿Qué raza de perro adopté?"),
        (["Voy a clases de {v} todos los martes por la tarde.", "Empecé a aprender {v} con una profesora, dos veces por semana."],
         "¿Qué instrumento estudia {s}?", ["piano", "violín", "guitarra", "violonchelo", "batería"],
         ["Hoy había un músico callejero cerca de la estación.", "Están renovando la sala de conciertos del centro."], "¿Qué instrumento estudio?"),
        (["En otoño nos mudamos a {v}, el trabajo nuevo está allí.", "La mudanza está decidida: {v} desde octubre."],
         "¿A qué ciudad se muda {s}?", ["Lisboa", "Toronto", "Melbourne", "Viena", "Osaka"],
         ["Las cajas son lo peor de cualquier mudanza.", "Mi primo cambió de ciudad dos veces el año pasado."], "¿A qué ciudad me mudo?"),
        (["Mi hermana acaba de tener una niña, la llamaron {v}.", "¡La pequeña {v} nació el domingo, ya soy tía!"],
         "¿Cómo se llama la sobrina de {s}?", ["Mila", "Sofía", "Ava", "Nora", "Lily"],
         ["Los bebés te cambian el sueño por completo.", "Mi hermana siempre quiso una familia grande."], "¿Cómo se llama mi sobrina?"),
        (["El fin de semana corrí mi primera {v}, todavía me duelen las piernas.", "¡Crucé la meta de la {v} por debajo de mi tiempo!"],
         "¿Qué carrera terminó {s}?", ["media maratón", "maratón", "carrera de 10 km", "carrera de montaña", "ultramaratón"],
         ["Correr con este calor es imposible.", "Me compré zapatillas nuevas pero chirrían."], "¿Qué carrera terminé?"),
        (["Por probar, llevo un mes con una dieta {v}.", "Sin carne ni lácteos: ahora sigo una dieta {v}."],
         "¿Qué alimentación sigue {s}?", ["vegana", "cetogénica", "paleo", "vegetariana", "mediterránea"],
         ["La panadería nueva tiene un pan increíble.", "Esta semana cociné pasta tres veces."], "¿Qué alimentación sigo?"),
        (["Conseguí trabajo nuevo en una startup, de {v}.", "Ayer firmé la oferta, voy a trabajar como {v}."],
         "¿Qué puesto aceptó {s}?", ["analista de datos", "enfermera", "arquitecta", "profesora", "cocinera"],
         ["Los lunes en el trabajo siempre son un caos.", "Mi jefe por fin aprobó las vacaciones."], "¿Qué puesto acepté?"),
        (["Pasamos las fiestas de senderismo en {v}, las vistas eran irreales.", "Acabo de volver de una semana de caminatas por {v}."],
         "¿Dónde hizo senderismo {s}?", ["la Patagonia", "Nepal", "Islandia", "los Alpes", "Escocia"],
         ["Mis botas se deshicieron después de esa ruta.", "En la montaña me siento diminuta."], "¿Dónde hice senderismo?"),
    ],
    "de": [
        (["Wir haben endlich einen kleinen {v}-Welpen aus dem Tierheim geholt!", "Rate mal: Auf meinem Sofa schläft jetzt ein {v}-Welpe, wir haben ihn adoptiert."],
         "Welche Hunderasse hat {s} adoptiert?", ["Beagle", "Corgi", "Husky", "Pudel", "Dackel"],
         ["Der Hund vom Nachbarn hat wieder die ganze Nacht gebellt.", "Die Hunde im Park sind immer so fröhlich."], "Welche Hunderasse habe ich adoptiert?"),
        (["Ich habe jeden Dienstagabend Unterricht: {v}.", "Ich lerne jetzt {v} bei einer Lehrerin, zweimal pro Woche."],
         "Welches Instrument lernt {s}?", ["Klavier", "Geige", "Gitarre", "Cello", "Schlagzeug"],
         ["Heute spielte ein Straßenmusiker am Bahnhof.", "Der Konzertsaal in der Innenstadt wird renoviert."], "Welches Instrument lerne ich?"),
        (["Im Herbst ziehen wir nach {v}, die neue Stelle ist dort.", "Der Umzug steht fest: {v} ab Oktober."],
         "In welche Stadt zieht {s}?", ["Lissabon", "Toronto", "Melbourne", "Wien", "Osaka"],
         ["Umzugskartons sind das Schlimmste an jedem Umzug.", "Mein Cousin hat letztes Jahr zweimal die Stadt gewechselt."], "In welche Stadt ziehe ich?"),
        (["Meine Schwester hat gerade ein Mädchen bekommen, sie heißt {v}.", "Die kleine {v} ist am Sonntag geboren, ich bin jetzt Tante!"],
         "Wie heißt die Nichte von {s}?", ["Mila", "Sophie", "Ava", "Nora", "Lily"],
         ["Babys verändern deinen Schlaf komplett.", "Meine Schwester wollte immer eine große Familie."], "Wie heißt meine Nichte?"),
        (["Am Wochenende bin ich meinen ersten {v} gelaufen, die Beine tun noch weh.", "Beim {v} bin ich unter meiner Zielzeit ins Ziel gekommen!"],
         "Welchen Lauf hat {s} geschafft?", ["Halbmarathon", "Marathon", "Zehn-Kilometer-Lauf", "Triathlon", "Ultramarathon"],
         ["Bei dieser Hitze kann man nicht laufen.", "Ich habe neue Turnschuhe gekauft, aber sie quietschen."], "Welchen Lauf habe ich geschafft?"),
        (["Als Experiment ernähre ich mich einen Monat lang {v}.", "Kein Fleisch, keine Milchprodukte: Ich esse jetzt {v}."],
         "Wie ernährt sich {s}?", ["vegan", "ketogen", "nach Paleo", "vegetarisch", "mediterran"],
         ["Die neue Bäckerei hat unglaubliches Brot.", "Diese Woche habe ich dreimal Nudeln gekocht."], "Wie ernähre ich mich?"),
        (["Ich habe eine neue Stelle als {v} in einem Startup.", "Gestern habe ich das Angebot unterschrieben, ich arbeite bald als {v}."],
         "Welche Stelle hat {s} angenommen?", ["Datenanalystin", "Krankenpflegerin", "Architektin", "Lehrerin", "Köchin"],
         ["Montags ist bei der Arbeit immer Chaos.", "Mein Chef hat endlich den Urlaub genehmigt."], "Welche Stelle habe ich angenommen?"),
        (["Über die Feiertage waren wir in {v} wandern, die Aussicht war unwirklich.", "Bin gerade von einer Woche Trekking in {v} zurück."],
         "Wo war {s} wandern?", ["Patagonien", "Nepal", "Island", "den Alpen", "Schottland"],
         ["Meine Stiefel sind nach dem Weg auseinandergefallen.", "In den Bergen fühle ich mich winzig."], "Wo war ich wandern?"),
    ],
}

THEMES = {
    "es": [
        (["Estoy planeando un viaje a {v} en primavera y no me decido dónde alojarme.", "Para el viaje a {v}, ¿compro un pase de tren o los billetes sobre la marcha?",
          "¿Qué barrios de {v} evitarías en una primera visita?"],
         "¿Qué hablamos sobre mi viaje a {v}?", ["Kioto", "Lisboa", "Estambul", "Buenos Aires", "Praga"]),
        (["Estamos reformando {v} y el contratista pidió mucho más de lo esperado.", "¿Aguantan mejor los azulejos o el vinilo para {v}?",
          "Las obras para reformar {v} se alargan, ¿cómo hago que el contratista cumpla los plazos?"],
         "¿Qué me aconsejaste sobre reformar {v}?", ["la cocina", "el baño", "el desván", "el sótano", "el balcón"]),
        (["La semana que viene tengo una entrevista para un puesto de {v} y me pone nerviosa la parte técnica.", "¿Cómo respondo a las preguntas de salario para un puesto de {v}?",
          "¿Me ayudas a preparar historias para la entrevista de {v}?"],
         "¿Cómo me ayudaste a preparar la entrevista de {v}?", ["jefe de producto", "desarrollador backend", "diseñador UX", "jefe de ventas", "científico de datos"]),
        (["Quiero cultivar {v} en el balcón pero no sé nada de tierra.", "Las plántulas de {v} están amarillas, ¿las riego demasiado?",
          "¿Cuándo es el momento de cosechar {v}?"],
         "¿Qué me contaste sobre cultivar {v}?", ["tomates", "fresas", "albahaca", "pimientos", "pepinos"]),
    ],
    "de": [
        (["Ich plane im Frühling eine Reise nach {v} und kann mich nicht entscheiden, wo ich wohnen soll.", "Soll ich für die Reise nach {v} einen Bahnpass kaufen oder Einzeltickets?",
          "Welche Viertel in {v} würdest du beim ersten Besuch meiden?"],
         "Was haben wir über meine Reise nach {v} besprochen?", ["Kyoto", "Lissabon", "Istanbul", "Buenos Aires", "Prag"]),
        (["Wir renovieren gerade, Raum: {v}, und der Handwerker hat viel mehr verlangt als erwartet.", "Halten Fliesen oder Vinyl besser? Es geht um den Raum {v}.",
          "Die Renovierung (Raum: {v}) zieht sich, wie halte ich den Handwerker im Zeitplan?"],
         "Was hast du mir zur Renovierung geraten, Raum: {v}?", ["Küche", "Bad", "Dachboden", "Keller", "Balkon"]),
        (["Nächste Woche habe ich ein Vorstellungsgespräch als {v} und bin wegen des technischen Teils nervös.", "Wie beantworte ich Gehaltsfragen für eine Stelle als {v}?",
          "Hilfst du mir, Beispiele für das Gespräch als {v} vorzubereiten?"],
         "Wie hast du mir bei der Vorbereitung auf das Gespräch als {v} geholfen?", ["Produktmanager", "Backend-Entwickler", "UX-Designer", "Vertriebsleiter", "Data Scientist"]),
        (["Ich möchte {v} auf dem Balkon anbauen, habe aber keine Ahnung von Erde.", "Meine {v}-Setzlinge werden gelb, gieße ich zu viel?",
          "Wann ist die richtige Zeit, {v} zu ernten?"],
         "Was hast du mir über den Anbau von {v} erzählt?", ["Tomaten", "Erdbeeren", "Basilikum", "Paprika", "Gurken"]),
    ],
}

FILLER = {
    "es": ["La verdad, la semana se me ha pasado volando.", "El trabajo me retuvo hasta tarde casi todos los días.", "El tiempo no para de cambiar entre lluvia y sol.",
           "El sábado por fin limpié todo el piso.", "Últimamente el móvil se me queda sin batería antes de comer.", "Vimos un documental sobre ballenas.",
           "Solo me mantiene en pie el café.", "El tráfico de esta mañana era increíble.", "Estoy intentando dormirme antes.",
           "Vinieron mis padres y cocinamos juntos.", "Siempre se me olvida contestar los mensajes.", "Han abierto una cafetería nueva en nuestra calle."],
    "de": ["Ehrlich gesagt ist die Woche wie im Flug vergangen.", "Die Arbeit hat mich fast jeden Tag lange festgehalten.", "Das Wetter wechselt ständig zwischen Regen und Sonne.",
           "Am Samstag habe ich endlich die ganze Wohnung geputzt.", "Mein Handy ist in letzter Zeit schon vor dem Mittag leer.", "Wir haben eine Doku über Wale gesehen.",
           "Nur der Kaffee hält mich noch aufrecht.", "Der Verkehr heute Morgen war unglaublich.", "Ich versuche, früher schlafen zu gehen.",
           "Meine Eltern waren zu Besuch und wir haben zusammen gekocht.", "Ich vergesse ständig, auf Nachrichten zu antworten.", "In unserer Straße hat ein neues Café aufgemacht."],
}
REPLIES = {
    "es": ["Suena a mucho, ve paso a paso.", "Buena pregunta; depende de tu presupuesto y del tiempo que tengas.",
           "Esto es lo primero que miraría: el coste, los plazos y lo que más te importa.", "Mucha gente en tu situación empieza poco a poco y luego ajusta."],
    "de": ["Das klingt nach viel, geh es Schritt für Schritt an.", "Gute Frage; das hängt von deinem Budget und deiner Zeit ab.",
           "Das würde ich zuerst bedenken: Kosten, Zeitplan und was dir am wichtigsten ist.", "Viele in deiner Lage fangen klein an und passen später an."],
}
QUESTION_TEMPORAL = {"es": "{q} (en {m} de {y})", "de": "{q} (im {m} {y})"}
SELF = {"es": "yo", "de": "ich"}
